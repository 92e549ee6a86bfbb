// The fault log of a component that retries on its own: one line when a
// fault begins, one per other kind of error (three kinds at most), one when
// it ends; an `error` listener hears every failure and nothing is logged.
import { afterEach, expect, it, vi } from 'vitest';
import { faultReporter, FaultSpell } from '../../src/faultSpell.js';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const readOnly = () => Object.assign(new Error('cannot execute SELECT FOR UPDATE in a read-only transaction'), { code: '25006', severity: 'ERROR' });

afterEach(() => void vi.restoreAllMocks());

it('logs a fault once when it begins, once per other kind of error, and once when it ends', () => {
  const lines: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  const outbox = faultReporter('[workhorse] worker w:', () => undefined)('outbox');
  for (let i = 0; i < 50; i++) outbox.failed(refused());
  for (let i = 0; i < 50; i++) outbox.failed(readOnly());
  outbox.ok();
  outbox.ok();
  expect(lines).toHaveLength(3);
  expect(lines[0]).toMatch(/^\[workhorse\] worker w: outbox: database fault; .*ECONNREFUSED/);
  expect(lines[1]).toMatch(/^\[workhorse\] worker w: outbox: another error during the same fault: .*\(25006\)/);
  expect(lines[2]).toMatch(/^\[workhorse\] worker w: outbox: database reachable again after \d+\.\d s \(100 failed tries\)$/);
  // The next fault is logged again.
  outbox.failed(refused());
  expect(lines).toHaveLength(4);
});

it('logs every error that is not a database fault, and logs nothing while someone listens', () => {
  const lines: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  const heard: unknown[] = [];
  let listening = false;
  const schedules = faultReporter('[workhorse] worker w:', () => (listening ? (e) => heard.push(e) : undefined))('schedules');
  schedules.failed(new Error('schedule "x": cannot compute its cadence'));
  schedules.failed(new Error('schedule "x": cannot compute its cadence'));
  expect(lines).toHaveLength(2);
  listening = true;
  for (let i = 0; i < 5; i++) schedules.failed(refused());
  schedules.ok();
  expect(heard).toHaveLength(5);
  expect(lines).toHaveLength(2);
});

it('counts at most three kinds of error per fault', () => {
  const spell = new FaultSpell(() => 0);
  const kinds = ['ECONNREFUSED', '25006', '57P01', '57014'].map((code) => Object.assign(new Error(code), { code, severity: 'FATAL' }));
  expect(kinds.map((e) => spell.fail(e))).toEqual(['begins', 'new kind', 'new kind', 'repeat']);
  expect(spell.succeed()).toEqual({ ms: 0, tries: 4 });
  expect(spell.succeed()).toBeUndefined();
});
