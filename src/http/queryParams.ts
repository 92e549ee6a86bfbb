// Query-string parameters the list routes share, parsed the same way on
// every route: a page size is a whole number (at most seven digits; the
// route caps it), a cursor is opaque text the previous page returned. A
// route that takes no parameter refuses any (`GET /queues?name=q1` is not a filter).
import * as z from 'zod';

export const limitParam = z
  .string()
  .regex(/^[0-9]{1,7}$/, 'limit is a whole number')
  .transform(Number)
  .optional();

export const cursorParam = z.string().optional();

/** The query of a route that takes no parameter: any key is a 400 naming it. */
export const noQuery = z.object({}).strict();
