// The tick's EventBridge schedule expression, checked at synth as
// EventBridge checks it at deploy: `rate(<n> <unit>)` with a positive whole
// n and the unit singular for 1 (`rate(1 minute)`) and plural otherwise
// (`rate(5 minutes)`); `cron(<6 fields>)` (minutes hours day-of-month month
// day-of-week year) with `?` in one of the two day fields, each field's
// values in its range (cronFields.ts). CloudFormation
// would otherwise refuse the rule half-way through a deployment.
import * as z from 'zod';
import { cronFieldsProblem } from './cronFields.js';

const UNITS = new Set(['minute', 'hour', 'day']);

/** Why `expression` is not one EventBridge accepts, or undefined when it is. */
export function scheduleExpressionProblem(expression: string): string | undefined {
  const rate = /^rate\((.*)\)$/.exec(expression);
  if (rate) {
    const m = /^([0-9]+) ([a-z]+)$/.exec(rate[1]!);
    if (!m) return 'expected rate(<n> minute|minutes|hour|hours|day|days)';
    const n = Number(m[1]);
    const unit = m[2]!;
    const singular = unit.endsWith('s') ? unit.slice(0, -1) : unit;
    if (!UNITS.has(singular)) return `"${unit}" is not a rate unit: use minute(s), hour(s) or day(s)`;
    if (n < 1) return 'a rate is at least 1';
    if (n === 1 && unit !== singular) return `write rate(1 ${singular}): EventBridge wants the singular unit for 1`;
    if (n > 1 && unit === singular) return `write rate(${n} ${singular}s): EventBridge wants the plural unit above 1`;
    return undefined;
  }
  const cron = /^cron\((.*)\)$/.exec(expression);
  if (cron) {
    const fields = cron[1]!.trim().split(/\s+/);
    if (fields.length !== 6) {
      return `an EventBridge cron has 6 fields (minutes hours day-of-month month day-of-week year), not ${fields.length}: e.g. cron(0/5 * * * ? *)`;
    }
    if ((fields[2] === '?') === (fields[4] === '?')) return 'put "?" in exactly one of day-of-month and day-of-week: e.g. cron(0 3 * * ? *)';
    return cronFieldsProblem(fields);
  }
  return 'expected rate(...) or cron(...)';
}

export const scheduleExpressionSchema = z.string().superRefine((s, ctx) => {
  const problem = scheduleExpressionProblem(s);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
