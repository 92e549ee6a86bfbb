// A command line the CLI cannot run: an unknown option, a missing or extra
// argument, a module that is missing or not JavaScript. Exit code 2, one
// line that says what to change.
import { WorkhorseError } from '../errors.js';

export class UsageError extends WorkhorseError {
  constructor(message: string) {
    super('usage', message);
  }
}
