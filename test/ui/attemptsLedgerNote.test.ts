// The Job view's attempts ledger, when it has no row: a first success is
// recorded on the job row, not in the ledger, so every job that succeeded
// on its first attempt said "No attempt has settled yet", and so did a job
// cancelled before it ran. The note now says why the ledger is empty.
import { describe, expect, it } from 'vitest';
import { noLedgerRows } from '../../src/http/ui/views/jobView.js';

describe('the note on an empty attempts ledger', () => {
  it('says a first success is on the job itself', () => {
    expect(noLedgerRows('succeeded')).toMatch(/^It succeeded on its first attempt: a first success is recorded on the job itself/);
  });

  it.each(['failed', 'cancelled'] as const)('says a %s job ended before any attempt settled', (status) => {
    expect(noLedgerRows(status)).toBe(`No attempt of it settled: it was ${status} before it ran or while it waited.`);
  });

  it.each(['ready', 'running', 'waiting'] as const)('says nothing has settled yet of a %s job', (status) => {
    expect(noLedgerRows(status)).toMatch(/^No attempt has settled yet/);
  });
});
