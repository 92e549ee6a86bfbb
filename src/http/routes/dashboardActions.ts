// The dashboard's actions (`admin`, a decision `decide`, and for a session:
// this site's page and its CSRF token). Each is one call of the client or
// its admin API — the same calls POST /queues/:name/pause,
// /workers/:id/pause, /jobs/:id/retry, /jobs/:id/cancel and
// /jobs/:id/decisions/:name, /outbox/retry and /outbox/discard make — then
// a redirect back to the page it came from with a notice (vouched for by a
// flash cookie, src/http/ui/flashNotice.ts). A decision's `by`
// is the viewer's token name. A refused action (no such queue or event, a job that cannot be
// retried) is the error page with the API's status and message.
import { Hono, type MiddlewareHandler } from 'hono';
import * as z from 'zod';
import { cancelledOrConflict } from '../../client/cancelRefusal.js';
import { jobIdStringSchema, waitNameSchema, workerIdSchema } from '../../names.js';
import { bigintIdString } from '../../storable.js';
import { parseInput } from '../../validation.js';
import { readQuery } from '../body.js';
import { pathParams } from '../pathParams.js';
import { noQuery } from '../queryParams.js';
import { redirectWithNotice } from '../ui/flashNotice.js';
import { requireAction } from '../ui/session/viewerAuth.js';
import type { UiEnv } from '../ui/uiEnv.js';
import type { UiSettings } from '../ui/uiSettings.js';
import { decisionSubject } from '../ui/views/common.js';
import { outboxPageFields, outboxPageUrl } from '../ui/data/outboxData.js';
import { outboxRefusal } from './outboxRefusal.js';
import { existingQueue } from './queues.js';

const jobParams = z.object({ id: jobIdStringSchema });
const workerParams = z.object({ id: workerIdSchema });
const eventParams = z.object({ id: bigintIdString('event id') });
const decisionParams = z.object({ id: jobIdStringSchema, name: waitNameSchema });

/**
 * `guard`, for an action: no action takes a query parameter, as no POST
 * route of the API does (a name that ended in `?` once turned a Pause button
 * into another action).
 */
function action(guard: MiddlewareHandler<UiEnv>): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    parseInput(noQuery, readQuery(c), 'query: a dashboard action takes no query parameter');
    return guard(c, next);
  };
}

/**
 * The Outbox page an action came from: its filter and cursor, which its
 * buttons post as hidden fields. It answered to the first unfiltered page,
 * where the same place in the list held another event (a pending one under
 * the Discard button a dead-letter triage had just used).
 */
function outboxBack(form: URLSearchParams): string {
  const page = parseInput(outboxPageFields, { state: form.get('state') ?? '', topic: form.get('topic') ?? '', before: form.get('before') ?? '' }, 'page fields');
  return outboxPageUrl(page, page.before);
}

export function dashboardActions(s: UiSettings): Hono<UiEnv> {
  const { client } = s;
  const { admin } = client;
  const r = new Hono<UiEnv>();
  const act = action(requireAction(s));
  const decide = action(requireAction(s, 'decide'));

  r.post('/queues/:name/pause', act, async (c) => {
    const name = await existingQueue(client, pathParams(c));
    await admin.pauseQueue(name);
    return redirectWithNotice(c, '/ui/queues', 'queue-paused', name);
  });
  r.post('/queues/:name/resume', act, async (c) => {
    const name = await existingQueue(client, pathParams(c));
    await admin.resumeQueue(name);
    return redirectWithNotice(c, '/ui/queues', 'queue-resumed', name);
  });
  r.post('/workers/:id/pause', act, async (c) => {
    const { id } = parseInput(workerParams, pathParams(c), 'path');
    await admin.setWorkerPaused(id, true);
    return redirectWithNotice(c, '/ui/workers', 'worker-paused', id);
  });
  r.post('/workers/:id/resume', act, async (c) => {
    const { id } = parseInput(workerParams, pathParams(c), 'path');
    await admin.setWorkerPaused(id, false);
    return redirectWithNotice(c, '/ui/workers', 'worker-resumed', id);
  });
  r.post('/jobs/:id/retry', act, async (c) => {
    const { id } = parseInput(jobParams, pathParams(c), 'path');
    // A scheduled job (ready, due later) is run now, not retried: its notice says so.
    const scheduled = (await client.getJob(id))?.status === 'ready';
    await client.retry(id);
    return redirectWithNotice(c, `/ui/jobs/${id}`, scheduled ? 'job-run-now' : 'job-retried', id);
  });
  r.post('/jobs/:id/cancel', act, async (c) => {
    const { id } = parseInput(jobParams, pathParams(c), 'path');
    cancelledOrConflict(await client.cancel(id));
    return redirectWithNotice(c, `/ui/jobs/${id}`, 'job-cancelled', id);
  });
  r.post('/outbox/:id/retry', act, async (c) => {
    const { id } = parseInput(eventParams, pathParams(c), 'path');
    const back = outboxBack(c.get('form')!);
    if ((await client.outbox.retry([id])).length === 0) throw await outboxRefusal(client, id, 'retried');
    return redirectWithNotice(c, back, 'event-retried', id);
  });
  r.post('/outbox/:id/discard', act, async (c) => {
    const { id } = parseInput(eventParams, pathParams(c), 'path');
    const back = outboxBack(c.get('form')!);
    if ((await client.outbox.discard([id])).length === 0) throw await outboxRefusal(client, id, 'discarded');
    return redirectWithNotice(c, back, 'event-discarded', id);
  });
  r.post('/jobs/:id/decisions/:name', decide, async (c) => {
    const { id, name } = parseInput(decisionParams, pathParams(c), 'path');
    const form = c.get('form')!;
    // A browser posts a textarea's line breaks as CRLF: stored as typed (LF), as through the API.
    const comment = (form.get('comment') ?? '').replace(/\r\n?/g, '\n').trim();
    const decision = await client.decide(id, name, { choice: form.get('choice') ?? '', by: c.get('viewer')!.name, comment: comment || null });
    return redirectWithNotice(c, '/ui/decisions', 'decision-made', decisionSubject(decision.choice, name, id));
  });
  return r;
}
