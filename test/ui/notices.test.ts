// A dashboard action redirects with ?done=<what>&subject=<to what>, and the
// page shows a notice from them. A link can carry any query string, so a
// subject that is not of the shape the action writes (a job or event id, a
// queue name, a worker id of up to 200 characters without control ones, a
// decision's own phrase) shows no notice: "Queue payments (all refunds were
// issued, call +1-555-0100) paused" was shown as the dashboard's word from a
// link in a chat. (The flash cookie vouches that an action wrote it too,
// flashNotice.ts.) A worker id with a space showed none after its pause.
import { describe, expect, it } from 'vitest';
import { decisionSubject, notice, noticeQuery } from '../../src/http/ui/views/common.js';

const text = (done: Parameters<typeof notice>[0], subject: string) => String(notice(done, subject));

describe('dashboard notices', () => {
  it('shows the notice an action wrote', () => {
    expect(text('job-cancelled', '42')).toContain('Job #42 cancelled.');
    expect(text('queue-paused', 'email.v2')).toContain('Queue email.v2 paused');
    expect(text('worker-resumed', 'host:123:ab12')).toContain('Worker host:123:ab12 resumed.');
    expect(text('worker-paused', 'my worker')).toContain('Worker my worker paused');
    expect(text('decision-made', '"ship" on decision approve of job #7')).toContain('on decision approve of job #7: the job resumes.');
    expect(text('event-discarded', '9007199254740993')).toContain('Outbox event #9007199254740993 discarded');
  });

  it.each([
    ['a quote', 'say "yes"', 'approve'],
    ['130 characters', 'y'.repeat(130), 'approve'],
    ['the longest choice, on a decision whose name has spaces', 'z'.repeat(200), `final ${'n'.repeat(194)}`],
    ['line breaks', 'ship\nnow\r\tplease', 'approve'],
    ['characters outside the BMP cut at the limit', '😀'.repeat(100), 'approve'],
  ])('shows the notice of a decision whose choice has %s', (_, choice, name) => {
    const subject = decisionSubject(choice, name, '9223372036854775807');
    expect(noticeQuery.subject.safeParse(subject).success).toBe(true);
    const shown = text('decision-made', subject);
    expect(shown).toMatch(/^<p class="notice" role="status">Recorded &quot;.+&quot; on decision .+ of job #9223372036854775807: the job resumes\.<\/p>$/);
    expect(shown).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it('keeps a short choice as it is', () => {
    expect(decisionSubject('ship', 'approve', '7')).toBe('"ship" on decision approve of job #7');
    expect(decisionSubject('say "yes"', 'approve', '7')).toBe('"say "yes"" on decision approve of job #7');
  });

  it.each([
    ['queue-paused', 'payments (all refunds were issued, call +1-555-0100)'],
    ['job-cancelled', '1 and every other job'],
    ['job-retried', '0'],
    // A worker id may hold spaces (`my worker`), not a line break; the flash cookie vouches for the rest.
    ['worker-paused', 'w1\nsign in again at evil.example'],
    ['worker-resumed', 'w'.repeat(201)],
    ['decision-made', 'nothing: call +1-555-0100'],
    ['event-retried', '12; all events'],
  ] as const)('shows nothing for %s with a subject of another shape (%j)', (done, subject) => {
    expect(notice(done, subject)).toBe('');
  });
});
