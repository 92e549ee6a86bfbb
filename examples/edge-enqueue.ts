// An edge function (Cloudflare Workers, Vercel Edge, Deno Deploy: any
// runtime with fetch and Web Crypto) that enqueues a job through the
// workhorse HTTP API and then kicks POST /tick, so the job runs now instead
// of at the next scheduled tick. It imports only the signing helper, which
// has no dependencies: in your project, `import { signRequest } from
// 'workhorse/signing'`. The server must let signed requests enqueue
// (WORKHORSE_SIGNED_SCOPES=enqueue); by default the signing secret is
// accepted on POST /tick only.
import { signRequest } from '../src/signing/index.js';

export interface EdgeEnv {
  /** Where the workhorse HTTP app is served, e.g. a Lambda Function URL. */
  WORKHORSE_URL: string;
  /** The same secret as the server's WORKHORSE_SIGNING_SECRET. */
  WORKHORSE_SIGNING_SECRET: string;
}

export interface JobRequest {
  type: string;
  payload: unknown;
  dedupeKey?: string;
}

/** Sends a request signed over its exact method, path and body. */
async function signedFetch(env: EdgeEnv, method: string, path: string, body: string): Promise<Response> {
  const headers = await signRequest({ secret: env.WORKHORSE_SIGNING_SECRET, method, path, body });
  return fetch(new URL(path, env.WORKHORSE_URL), {
    method,
    ...(body === '' ? {} : { body }),
    headers: { ...headers, 'content-type': 'application/json' },
  });
}

/** The API refused the enqueue: its status and its error's code and message. */
export class EnqueueError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`enqueue failed: ${code}: ${message}`);
    this.name = 'EnqueueError';
  }
}

/**
 * Enqueues one job, then asks for a tick. The enqueue must succeed; the
 * kick is best effort (the scheduled tick runs the job anyway), so its
 * failure is reported, not thrown.
 */
export async function enqueueAndKick(env: EdgeEnv, job: JobRequest): Promise<{ id: string; created: boolean; tick: unknown }> {
  const res = await signedFetch(env, 'POST', '/jobs', JSON.stringify(job));
  const body = (await res.json()) as { id: string; created: boolean } | { error: { code: string; message: string } };
  if (!res.ok || 'error' in body) {
    const e = 'error' in body ? body.error : { code: String(res.status), message: res.statusText };
    throw new EnqueueError(res.status, e.code, e.message);
  }
  const tick = await signedFetch(env, 'POST', '/tick', '')
    .then(async (r) => (r.ok ? r.json() : { error: r.status }))
    .catch((err: unknown) => ({ error: String(err) }));
  return { ...body, tick };
}

/**
 * The edge entry: a sign-up form posts `{ email, name }`; the welcome email
 * is a job of the example app (examples/app.ts). The dedupe key makes a
 * double submit enqueue once. On Cloudflare, pass the kick to
 * `ctx.waitUntil()` to answer the user before the tick finishes.
 */
export default {
  async fetch(request: Request, env: EdgeEnv): Promise<Response> {
    if (request.method !== 'POST') return new Response('method not allowed', { status: 405 });
    const form = (await request.json().catch(() => null)) as { email?: unknown; name?: unknown } | null;
    if (!form || typeof form.email !== 'string' || typeof form.name !== 'string') {
      return Response.json({ error: 'send { email, name }' }, { status: 400 });
    }
    try {
      const queued = await enqueueAndKick(env, {
        type: 'email.welcome',
        payload: { to: form.email, name: form.name },
        dedupeKey: `welcome:${form.email.toLowerCase()}`,
      });
      return Response.json({ queued: queued.id }, { status: 202 });
    } catch (err) {
      // The form's fault (the job's schema refused it: not an email address) is the user's to fix: a 400 saying why.
      // Anything else (credentials, the server, the network) is this function's: a 502, the details in its log.
      if (err instanceof EnqueueError && err.code === 'validation_failed') return Response.json({ error: err.message }, { status: 400 });
      console.error(err);
      return Response.json({ error: 'could not queue the welcome email; try again' }, { status: 502 });
    }
  },
};
