// The tick's default log (when its options give none): a problem it
// carries on through is one line, as a worker logs it (carriedOn.ts): a
// database fault, an error PostgreSQL answered, one of workhorse's typed
// errors. A fault-ridden tick printed each whole, stack and fields
// included (44-70 lines for one tick). Anything else (a bug) is printed whole.
import { carriedOnLine } from '../carriedOn.js';

/** Logs `line` (it ends with a colon when `err` follows) and `err`. */
export function defaultTickLog(line: string, err?: unknown): void {
  if (err === undefined) {
    console.error(line);
    return;
  }
  const one = carriedOnLine(err, line.replace(/:\s*$/, ''));
  if (one !== undefined) console.error(one);
  else console.error(line, err);
}
