// The shapes of names that reach the database: namespaces (which also form
// a NOTIFY channel, so they are short), queues, job types and keys.
import * as z from 'zod';

export const namespaceSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,40}$/, 'a namespace is 1-40 characters of letters, digits, "_", "." or "-"');
export const queueNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'a queue name is 1-100 characters of letters, digits, "_", ".", ":" or "-"');
export const jobTypeSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:/-]{1,128}$/, 'a job type is 1-128 characters of letters, digits, "_", ".", ":", "/" or "-"');
export const keySchema = z.string().min(1).max(512);
export const workerIdSchema = z.string().min(1).max(200);
