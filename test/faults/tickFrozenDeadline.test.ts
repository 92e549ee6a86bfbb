// A tick whose network freezes while it works (sockets open, nothing
// answered) returns before its deadline, as every tick call is bounded to
// end by the deadline less an eighth of the safety margin. The tick failed
// in time, but then waited for its pool to end (a connection attempt stuck
// behind the freeze) until the deadline itself, and returned a few ms after
// it: on Lambda, an invocation that timed out. Through a TCP proxy that
// freezes every connection a second into the tick. And with no `log` of
// its own, such a tick logs each fault as one line, as a worker does: it
// printed each error whole (stack, fields and cause: 44-70 lines a tick).
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { TcpProxy } from '../../certify/tcpProxy.js';
import { Client } from '../../src/client/client.js';
import { DatabaseUnavailableError } from '../../src/errors.js';
import { runTick } from '../../src/tick/runTick.js';
import app, { SleepJob } from '../fixtures/tick-app.js';
import { createProxiedDatabase, type ProxiedDatabase } from '../helpers/proxiedDatabase.js';

const BUDGET_MS = 8_000;
const MARGIN_MS = 4_000;
let proxied: ProxiedDatabase;
let proxy: TcpProxy;

beforeAll(async () => {
  proxied = await createProxiedDatabase();
  proxy = proxied.proxy;
  const client = new Client({ connectionString: proxied.db.url, jobs: [SleepJob] });
  await client.enqueueMany(Array.from({ length: 200 }, () => ({ job: SleepJob, payload: { ms: 100 } })));
  await client.close();
});

afterAll(async () => {
  proxy?.resume();
  await proxied?.close();
});

async function frozenTick(log?: (line: string, err?: unknown) => void): Promise<{ outcome: unknown; returnedAt: number; deadline: number }> {
  const deadline = Date.now() + BUDGET_MS;
  const freezing = setTimeout(() => proxy.freeze(), 1_000);
  try {
    const outcome = await runTick({ app, connectionString: proxied.url, deadline: new Date(deadline), safetyMarginMs: MARGIN_MS, concurrency: 10, log }).then(
      () => 'returned a summary',
      (err: unknown) => err,
    );
    return { outcome, returnedAt: Date.now(), deadline };
  } finally {
    clearTimeout(freezing);
    proxy.resume();
    proxy.dropAll();
  }
}

it('a tick whose network freezes mid-batch fails before its deadline, its pool included', async () => {
  const { outcome, returnedAt, deadline } = await frozenTick(() => undefined);
  expect(outcome).toBeInstanceOf(DatabaseUnavailableError);
  // Its calls end by the deadline less an eighth of the margin (500 ms); it returned at the deadline or after.
  expect(returnedAt).toBeLessThan(deadline);
}, 30_000);

it('logs each fault of such a tick as one line when it is given no log', async () => {
  const client = new Client({ connectionString: proxied.db.url, jobs: [SleepJob] });
  await client.enqueueMany(Array.from({ length: 200 }, () => ({ job: SleepJob, payload: { ms: 100 } })));
  await client.close();
  const lines: string[] = [];
  const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map((a) => (a instanceof Error ? String(a.stack) : String(a))).join(' ')));
  try {
    const { outcome } = await frozenTick();
    expect(outcome).toBeInstanceOf(DatabaseUnavailableError);
  } finally {
    spy.mockRestore();
  }
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    expect(line).toMatch(/^\[workhorse\] tick /);
    expect(line).not.toContain('\n');
  }
}, 30_000);
