// Query-string parameters the list routes share, parsed the same way on
// every route: each is one string (a repeated parameter is refused), a page
// size is a whole number (at most seven digits; the route caps it), a cursor
// is opaque text the previous page returned, a choice one of its words. A
// route that takes no parameter refuses any (`GET /queues?name=q1` is not a filter).
import * as z from 'zod';

export const limitParam = z
  .string()
  .regex(/^[0-9]{1,7}$/, 'limit is a whole number of at most 7 digits')
  .transform(Number)
  .optional();

export const cursorParam = z.string().optional();

/**
 * One of a fixed set of words (`?state=open`). A parameter is one string
 * first, like every other, so a repeated one (`?state=open&state=open`) is
 * refused the same way on every route; then its word is checked.
 */
export function choiceParam<const T extends readonly [string, ...string[]]>(choices: T) {
  return z.string().pipe(z.enum(choices)).optional();
}

/** The query of a route that takes no parameter: any key is a 400 naming it. */
export const noQuery = z.object({}).strict();
