// The demo's job definitions and handlers: the six jobs of the fleet page.
// J1-J3 render reports, J4 and J5 rebuild the same tenant behind the
// concurrency key `rebuild:acme`, and J6's type only build 1 handles.
import * as z from 'zod';
import { defineJob } from '../client/defineJob.js';
import type { Worker } from '../worker/worker.js';

export const RenderReport = defineJob({ type: 'report.render', schema: z.object({ label: z.string() }), retry: { maxAttempts: 3 } });
export const RebuildTenant = defineJob({ type: 'tenant.rebuild', schema: z.object({ label: z.string(), tenant: z.string() }), retry: { maxAttempts: 3 } });
export const LegacyExport = defineJob({ type: 'legacy.export', schema: z.object({ label: z.string() }), retry: { maxAttempts: 3 } });

export const demoJobs = [RenderReport, RebuildTenant, LegacyExport];

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason);
    });
  });

/** Binds the handlers a worker of `build` has: build 2 drops legacy.export. */
export function configureDemoWorker(worker: Worker, build: string, workMs: number): void {
  worker
    .handle(RenderReport, async (p, ctx) => {
      await pause(workMs, ctx.signal);
      return { rendered: p.label, by: ctx.workerId };
    })
    .handle(RebuildTenant, async (p, ctx) => {
      await ctx.step('snapshot', () => ({ tenant: p.tenant }));
      await pause(workMs, ctx.signal);
      return { rebuilt: p.tenant, by: ctx.workerId };
    });
  if (build === '1') {
    worker.handle(LegacyExport, async (p, ctx) => {
      await pause(workMs / 2, ctx.signal);
      return { exported: p.label, by: ctx.workerId };
    });
  }
}
