// An example workhorse app: two job types with zod payload schemas and their
// handlers. The CDK example stack (infra/app.ts) deploys it as a tick worker;
// a real service keeps a module like this next to its code and points the
// WorkhorseTickWorker construct (or `workhorse worker`) at it.
import * as z from 'zod';
import { defineApp, defineJob } from '../src/index.js';

export const SendWelcomeEmail = defineJob({
  type: 'email.welcome',
  schema: z.object({ to: z.email(), name: z.string().min(1).max(200) }),
  queue: 'email',
  retry: { maxAttempts: 5 },
  timeoutMs: 5_000,
});

export const SummariseReport = defineJob({
  type: 'report.summarise',
  schema: z.object({ reportId: z.string().min(1), lines: z.array(z.string()).max(10_000) }),
  timeoutMs: 20_000,
});

export default defineApp({
  jobs: [SendWelcomeEmail, SummariseReport],
  configure(worker) {
    worker.handle(SendWelcomeEmail, async ({ to, name }, ctx) => {
      // A checkpoint: a retried job does not send the email twice.
      const messageId = await ctx.step('send', async () => `welcome-${ctx.job.id}`);
      return { to, greeting: `Welcome, ${name}!`, messageId };
    });
    worker.handle(SummariseReport, async ({ reportId, lines }, ctx) => {
      const words = await ctx.step('count', () => lines.reduce((n, l) => n + l.split(/\s+/).filter(Boolean).length, 0));
      await ctx.progress({ counted: words });
      return { reportId, lines: lines.length, words };
    });
  },
});
