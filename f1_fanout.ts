// Fan-out against a Lambda endpoint that never answers: the tick must still return before its deadline.
import { createClient, createTickHandler } from 'workhorse';
import app, { Slow } from './probeApp.js';
import { ctx, ebEvent, url, sql } from './lib.js';
const ns = 'fan' + Date.now();
process.env.WORKHORSE_NAMESPACE = ns;
const client = createClient({ connectionString: url, namespace: ns, jobs: app.jobs });
await client.enqueueMany(Array.from({ length: 300 }, () => ({ job: Slow, payload: { ms: 200 } })));
const budget = 4000;
const t0 = Date.now();
try { const s = await createTickHandler(app)(ebEvent(), ctx(budget)); console.log('took', Date.now() - t0, 'ms of', budget, JSON.stringify(s)); }
catch (e: any) { console.log('ERR', Date.now() - t0, e.constructor.name, e.message); }
console.log(await sql(`select status, count(*)::int from workhorse.jobs where namespace=$1 group by 1`, [ns]));
await client.close();
process.exit(0);
