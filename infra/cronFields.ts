// The values of an EventBridge cron expression's six fields, checked as
// EventBridge checks them at deploy: minutes 0-59, hours 0-23, day-of-month
// 1-31 (with L, W and LW), month 1-12 or JAN-DEC, day-of-week 1-7 or
// SUN-SAT (with L and #), year 1970-2199; each field a `*`, a `?` (the day
// fields only), or a comma list of values, ranges and `/` steps. The
// Quartz forms EventBridge takes in the day fields (L, L-3, LW, 15W; L,
// 6L, FRIL, 3#2, MON#1) pass: a refusal here blocks a deploy, so what is
// not surely wrong is left to EventBridge.
// `cron(61 25 32 13 ? 1969)` passed synth and failed the deployment.

interface Field {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** Day-of-month's L, W, LW and 15W; day-of-week's L, 6L and 6#3. */
  special?: RegExp;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const FIELDS: readonly Field[] = [
  { name: 'minutes', min: 0, max: 59 },
  { name: 'hours', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31, special: /^(L|LW|L-([1-9]|[12][0-9]|30)|([1-9]|[12][0-9]|3[01])W)$/ },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day-of-week', min: 1, max: 7, names: DAYS, special: /^(L|([1-7]|SUN|MON|TUE|WED|THU|FRI|SAT)(L|#[1-5]))$/ },
  { name: 'year', min: 1970, max: 2199 },
];

/** A value of the field (a number in range, or its name), or undefined. */
function valueOf(f: Field, text: string): number | undefined {
  const named = f.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return named + 1;
  if (!/^[0-9]+$/.test(text)) return undefined;
  const n = Number(text);
  return n >= f.min && n <= f.max ? n : undefined;
}

/** Why one comma item of the field is refused, or undefined. */
function itemProblem(f: Field, item: string): string | undefined {
  if (f.special?.test(item.toUpperCase())) return undefined;
  const [range, step, extra] = item.split('/');
  if (extra !== undefined) return `"${item}" has more than one "/"`;
  if (step !== undefined && (!/^[0-9]+$/.test(step) || Number(step) < 1)) return `"${item}": the step after "/" is a whole number of at least 1`;
  if (range === '*') return undefined;
  const ends = range!.split('-');
  if (ends.length > 2 || ends.some((e) => valueOf(f, e) === undefined)) {
    return `"${item}" is not a value of ${f.name} (${f.min}-${f.max}${f.names ? ` or ${f.names[0]}-${f.names[f.names.length - 1]}` : ''})`;
  }
  return undefined;
}

/** Why the six fields are refused (the first problem found), or undefined. */
export function cronFieldsProblem(fields: readonly string[]): string | undefined {
  for (let i = 0; i < FIELDS.length; i++) {
    const f = FIELDS[i]!;
    const text = fields[i]!;
    if (text === '?') {
      if (f.name === 'day-of-month' || f.name === 'day-of-week') continue;
      return `"?" is only for day-of-month or day-of-week, not ${f.name}`;
    }
    for (const item of text.split(',')) {
      const problem = itemProblem(f, item);
      if (problem) return `${f.name}: ${problem}`;
    }
  }
  return undefined;
}
