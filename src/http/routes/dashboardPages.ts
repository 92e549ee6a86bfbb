// The dashboard's views (`read`): Namespace, Job, Workers, Queues,
// Schedules, Decisions, Alerts and the Outbox. Each is a load (client and dashboard reads) and a render; the
// same route answers the script's live refresh with the live region only.
// A notice in the query is shown only for the redirect of an action this
// server carried out (src/http/ui/flashNotice.ts).
import { Hono, type Context } from 'hono';
import { pathParams } from '../pathParams.js';
import { loadAlerts } from '../ui/data/alertsData.js';
import { loadDecisions } from '../ui/data/decisionsData.js';
import { loadJob } from '../ui/data/jobData.js';
import { loadQueues, loadSchedules, loadWorkers, parseFleetQuery } from '../ui/data/fleetData.js';
import { loadNamespace, parseNamespaceQuery } from '../ui/data/namespaceData.js';
import { loadOutbox } from '../ui/data/outboxData.js';
import { pageQuery } from '../ui/flashNotice.js';
import { renderPage } from '../ui/render.js';
import { requireView } from '../ui/session/viewerAuth.js';
import type { UiEnv } from '../ui/uiEnv.js';
import type { UiSettings } from '../ui/uiSettings.js';
import { alertsView } from '../ui/views/alertsView.js';
import { decisionsView } from '../ui/views/decisionsView.js';
import { jobView } from '../ui/views/jobView.js';
import { namespaceView } from '../ui/views/namespaceView.js';
import { outboxView } from '../ui/views/outboxView.js';
import { queuesView } from '../ui/views/queuesView.js';
import { schedulesView } from '../ui/views/schedulesView.js';
import { workersView } from '../ui/views/workersView.js';

export function dashboardPages(s: UiSettings): Hono<UiEnv> {
  const { client } = s;
  const ns = client.namespace;
  const viewer = (c: Context<UiEnv>) => c.get('viewer') ?? null;
  const r = new Hono<UiEnv>();
  r.use(requireView('read'));
  r.get('/', async (c) => renderPage(c, namespaceView(await loadNamespace(client, parseNamespaceQuery(pageQuery(c)))), ns));
  r.get('/jobs/:id', async (c) => renderPage(c, jobView(await loadJob(client, pathParams(c), pageQuery(c), s.now()), viewer(c)), ns));
  r.get('/workers', async (c) => renderPage(c, workersView(await loadWorkers(client, parseFleetQuery(pageQuery(c))), viewer(c)), ns));
  r.get('/queues', async (c) => renderPage(c, queuesView(await loadQueues(client, parseFleetQuery(pageQuery(c))), viewer(c)), ns));
  r.get('/schedules', async (c) => renderPage(c, schedulesView(await loadSchedules(client, parseFleetQuery(pageQuery(c)), s.now())), ns));
  r.get('/decisions', async (c) => renderPage(c, decisionsView(await loadDecisions(client, pageQuery(c), s.now()), viewer(c)), ns));
  r.get('/alerts', async (c) => renderPage(c, alertsView(await loadAlerts(client, pageQuery(c), s.now())), ns));
  r.get('/outbox', async (c) => renderPage(c, outboxView(await loadOutbox(client, pageQuery(c), s.now()), viewer(c)), ns));
  return r;
}
