// The entry of every benchmark child process: one system, one scenario.
// It reports `ready`, waits for the parent's `go` where timing matters,
// streams progress as jobs start, and ends with one `result` message.
// Running each system in its own process keeps their event loops, pools
// and garbage collectors apart while they share one process tree.
import { systemFor } from '../systems/registry.js';
import { QUEUE } from '../systems/system.js';
import { runRawCeiling } from '../rawCeiling.js';
import { percentiles } from '../stats.js';
import { now, type ChildMessage, type ChildTask, type ParentMessage } from './messages.js';

function send(m: ChildMessage): void {
  process.send?.(m);
}

const parentSaid = (cmd: ParentMessage['cmd']) =>
  new Promise<void>((resolve) => {
    const on = (m: ParentMessage) => {
      if (m.cmd !== cmd) return;
      process.off('message', on);
      resolve();
    };
    process.on('message', on);
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Counts handler starts and streams them to the parent in small batches.
 * Also notes this process's CPU time at the first start, so CPU per job
 * leaves out the worker's start-up (connecting, registering), as the rate
 * does.
 */
function progressReporter() {
  let unsent = 0;
  let total = 0;
  let cpuAtFirst: NodeJS.CpuUsage | undefined;
  const flush = () => {
    if (unsent === 0) return;
    send({ ev: 'progress', n: unsent, at: now() });
    unsent = 0;
  };
  const timer = setInterval(flush, 20);
  return {
    count() {
      if (!cpuAtFirst) {
        cpuAtFirst = process.cpuUsage();
        send({ ev: 'first', at: now() });
      }
      unsent++;
      total++;
      if (unsent >= 200) flush();
    },
    stop() {
      clearInterval(timer);
      flush();
      return total;
    },
    /** CPU milliseconds since the first handler start (0 if none started). */
    cpuMsSinceFirst() {
      if (!cpuAtFirst) return 0;
      const cpu = process.cpuUsage(cpuAtFirst);
      return (cpu.user + cpu.system) / 1000;
    },
  };
}

async function run(task: ChildTask): Promise<Record<string, unknown>> {
  const sys = systemFor(task.system);
  const s = task.scenario;
  switch (s.kind) {
    case 'enqueue': {
      await sys.open(task.url);
      send({ ev: 'ready' });
      await parentSaid('go');
      let t = now();
      await sys.enqueueBulk(0, s.bulk);
      const bulkMs = now() - t;
      t = now();
      for (let i = 0; i < s.single; i++) await sys.enqueueOne(s.bulk + i);
      const singleMs = now() - t;
      await sys.close();
      return { bulkPerSec: (s.bulk / bulkMs) * 1000, singlePerSec: (s.single / singleMs) * 1000, bulkMs, singleMs };
    }
    case 'fill': {
      await sys.open(task.url);
      const t = now();
      await sys.enqueueBulk(0, s.count);
      const ms = now() - t;
      await sys.close();
      return { ms };
    }
    case 'drain': {
      const progress = progressReporter();
      send({ ev: 'ready' });
      await parentSaid('go');
      const worker = await sys.startWorker(task.url, { ...s, onStart: () => progress.count() });
      await parentSaid('stop');
      const cpuMs = progress.cpuMsSinceFirst();
      await worker.stop();
      return { handled: progress.stop(), cpuMs };
    }
    case 'latency': {
      const starts = new Map<number, number>();
      await sys.open(task.url);
      const worker = await sys.startWorker(task.url, {
        ...s,
        onStart: (p) => starts.set((p as { i: number }).i, now()),
      });
      await sleep(1500);
      send({ ev: 'ready' });
      await parentSaid('go');
      const enqueuedAt = new Map<number, number>();
      for (let i = 0; i < s.samples; i++) {
        enqueuedAt.set(i, now());
        await sys.enqueueOne(i);
        await sleep(10 + Math.random() * 20);
      }
      const deadline = Date.now() + 30_000;
      while (starts.size < s.samples && Date.now() < deadline) await sleep(20);
      await worker.stop();
      await sys.close();
      const lat = [...enqueuedAt].filter(([i]) => starts.has(i)).map(([i, t0]) => starts.get(i)! - t0);
      return { ...percentiles(lat), missing: s.samples - lat.length };
    }
    case 'raw': {
      send({ ev: 'ready' });
      await parentSaid('go');
      return { ...(await runRawCeiling({ url: task.url, namespace: 'default', queue: QUEUE, batch: s.batch, loops: s.loops })) };
    }
  }
}

/** Sends the last message and exits: libraries may leave timers behind. */
function finish(m: ChildMessage, code: number): void {
  if (!process.send) process.exit(code);
  process.send(m, () => process.exit(code));
}

const task = JSON.parse(process.argv[2] ?? '{}') as ChildTask;
run(task).then(
  (data) => finish({ ev: 'result', data }, 0),
  (err: unknown) => finish({ ev: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }, 1),
);
