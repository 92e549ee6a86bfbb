// A dashboard action redirects with ?done=<what>&subject=<to what>, and the
// page shows a notice from them. A link can carry any query string, so a
// subject that is not of the shape the action writes (a job or event id, a
// queue name, a worker id without spaces, a decision's own phrase) shows no
// notice: "Queue payments (all refunds were issued, call +1-555-0100)
// paused" was shown as the dashboard's word from a link in a chat.
import { describe, expect, it } from 'vitest';
import { notice } from '../../src/http/ui/views/common.js';

const text = (done: Parameters<typeof notice>[0], subject: string) => String(notice(done, subject));

describe('dashboard notices', () => {
  it('shows the notice an action wrote', () => {
    expect(text('job-cancelled', '42')).toContain('Job #42 cancelled.');
    expect(text('queue-paused', 'email.v2')).toContain('Queue email.v2 paused');
    expect(text('worker-resumed', 'host:123:ab12')).toContain('Worker host:123:ab12 resumed.');
    expect(text('decision-made', '"ship" on decision approve of job #7')).toContain('on decision approve of job #7: the job resumes.');
    expect(text('event-discarded', '9007199254740993')).toContain('Outbox event #9007199254740993 discarded');
  });

  it.each([
    ['queue-paused', 'payments (all refunds were issued, call +1-555-0100)'],
    ['job-cancelled', '1 and every other job'],
    ['job-retried', '0'],
    ['worker-paused', 'w1 by the security team; sign in again at evil.example'],
    ['decision-made', 'nothing: call +1-555-0100'],
    ['event-retried', '12; all events'],
  ] as const)('shows nothing for %s with a subject of another shape (%j)', (done, subject) => {
    expect(notice(done, subject)).toBe('');
  });
});
