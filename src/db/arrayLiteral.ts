// PostgreSQL array literals for the batch protocol calls. The pg driver
// quotes and escapes every element of a JS array parameter; for the hot
// settle path (hundreds of ids, fences and results per statement) building
// the literal here costs a fraction of that. Integers need no quoting;
// text elements are double-quoted with `"` and `\` escaped; null is NULL.

/** `{1,2,3}` from ids or integers (bigint ids travel as decimal strings). */
export function integerArrayLiteral(values: readonly (string | number)[]): string {
  for (const v of values) {
    if (!/^-?\d+$/.test(String(v))) throw new TypeError(`not an integer: ${String(v)}`);
  }
  return `{${values.join(',')}}`;
}

/** `{"a","b\"c",NULL}` from text values (JSON documents included). */
export function textArrayLiteral(values: readonly (string | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    out += v === null || v === undefined ? 'NULL' : `"${v.replace(/[\\"]/g, '\\$&')}"`;
  }
  return `${out}}`;
}
