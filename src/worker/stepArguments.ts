// The checks of a step's own arguments, made before anything is read or
// written: a name PostgreSQL cannot key (too long for an index row) and a
// body that is not a function fail the job without retries, since every
// attempt would give them again.
import { ValidationError } from '../errors.js';
import { stepNameSchema } from '../names.js';
import { parseField } from '../validation.js';
import { finalRefusal } from './durable.js';

/** A step's name, refused without retries when PostgreSQL cannot store it. */
export function checkStepName(name: string, what: string): void {
  try {
    parseField(stepNameSchema, name, 'name', what);
  } catch (err) {
    throw finalRefusal(err);
  }
}

/** A step's body that is not a function, refused without retries. */
export function checkStepFn(fn: unknown, what: string): void {
  if (typeof fn !== 'function') throw finalRefusal(new ValidationError(`${what}: its body must be a function (got ${fn === null ? 'null' : typeof fn})`));
}
