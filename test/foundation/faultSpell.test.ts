// The fault log of a component that retries on its own: one line when a
// fault begins, one per other kind of error (three kinds at most), one when
// it ends; an `error` listener hears every failure and nothing is logged.
import { afterEach, expect, it, vi } from 'vitest';
import { FLAP_MS, faultReporter, FaultSpell, LONG_FAULT_MS } from '../../src/faultSpell.js';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const readOnly = () => Object.assign(new Error('cannot execute SELECT FOR UPDATE in a read-only transaction'), { code: '25006', severity: 'ERROR' });

afterEach(() => void vi.restoreAllMocks());

it('logs a fault once when it begins, once per other kind of error, and once when it ends', () => {
  const lines: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  let t = 0;
  const outbox = faultReporter('[workhorse] worker w:', () => undefined, () => t)('outbox');
  for (let i = 0; i < 50; i++) outbox.failed(refused());
  for (let i = 0; i < 50; i++) outbox.failed(readOnly());
  outbox.ok();
  outbox.ok();
  expect(lines).toHaveLength(3);
  expect(lines[0]).toMatch(/^\[workhorse\] worker w: outbox: database fault; .*ECONNREFUSED/);
  expect(lines[1]).toMatch(/^\[workhorse\] worker w: outbox: another error during the same fault: .*\(25006\)/);
  expect(lines[2]).toMatch(/^\[workhorse\] worker w: outbox: database reachable again after \d+\.\d s \(100 failed tries\)$/);
  // The next fault, once no fault came for FLAP_MS, is logged again.
  t += FLAP_MS;
  outbox.failed(refused());
  expect(lines).toHaveLength(4);
});

it('counts faults that come and go every few seconds, logging the count at most every 30 s, and logs one that lasts', () => {
  const lines: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  let t = 0;
  const claim = faultReporter('[workhorse] worker w:', () => undefined, () => t)('claim');
  // A minute of faults each over within a second, one every 2 s: the first is logged as a fault; then two counts.
  for (let i = 0; i < 30; i++) {
    claim.failed(refused());
    t += 500;
    claim.ok();
    t += 1_500;
  }
  expect(lines).toHaveLength(3);
  expect(lines[0]).toMatch(/claim: database fault; retrying with backoff, logged again when it is over/);
  expect(lines[1]).toMatch(/claim: database reachable again after 0\.5 s/);
  expect(lines[2]).toMatch(/claim: database faults keep coming and going: \d+ in the last 30 s, each over within seconds \(the latest\): .*ECONNREFUSED/);
  // One that begins among them and lasts is logged as a fault after all, and its end too.
  claim.failed(refused());
  t += LONG_FAULT_MS;
  claim.failed(refused());
  claim.ok();
  expect(lines.slice(3)).toEqual([
    expect.stringMatching(/claim: database fault; retrying with backoff \(for 10 s now\), logged again when it is over: .*ECONNREFUSED/),
    expect.stringMatching(/claim: database reachable again after 10\.0 s \(2 failed tries\)/),
  ]);
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
