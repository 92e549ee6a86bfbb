// A payload key named `__proto__` cannot survive a job's schema: JSON.parse
// makes it an ordinary own key, but zod's records and loose objects copy
// keys by assignment, and assigning `__proto__` sets the copy's prototype
// instead, so the key and its value vanished from the stored payload while
// the enqueue answered 201. The boundaries refuse it, naming its path,
// before the schema runs.
import type { ValidationIssue } from './errors.js';

const PROTO_MESSAGE = 'must not be a key named "__proto__" (JavaScript objects take it as their prototype, so it would not be stored): rename it';

/** The path of the first own enumerable `__proto__` key in a JSON-like value, or undefined. */
export function protoKeyIssue(value: unknown): ValidationIssue | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const seen = new Set<object>();
  const stack: { value: object; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (seen.has(item.value)) continue; // a cycle: the encoding refuses it later
    seen.add(item.value);
    if (Array.isArray(item.value)) {
      for (let i = item.value.length - 1; i >= 0; i--) {
        const v: unknown = item.value[i];
        if (typeof v === 'object' && v !== null) stack.push({ value: v, path: [...item.path, i] });
      }
      continue;
    }
    if (Object.prototype.propertyIsEnumerable.call(item.value, '__proto__')) return { path: [...item.path, '__proto__'], message: PROTO_MESSAGE };
    const keys = Object.keys(item.value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const v: unknown = (item.value as Record<string, unknown>)[keys[i]!];
      if (typeof v === 'object' && v !== null) stack.push({ value: v, path: [...item.path, keys[i]!] });
    }
  }
  return undefined;
}
