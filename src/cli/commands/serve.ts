// `workhorse serve`: the HTTP app on @hono/node-server, for local use and
// containers. The app module (--app or WORKHORSE_APP) supplies the job types
// POST /jobs accepts and the handlers POST /tick runs. A database that does
// not answer at start-up is reported and the server starts anyway (/healthz
// answers 503 until it does); a schema of the wrong version stops it.
// SIGTERM or SIGINT stops accepting connections, lets requests in flight
// finish, closes the pools and exits 0.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import * as z from 'zod';
import { loadHttpEnvConfig } from '../../config.js';
import { SchemaVersionError, WorkhorseError } from '../../errors.js';
import { answerClientErrors, answerConnect, refusedMissingHost, requestErrorResponse } from '../../http/clientErrors.js';
import { answerUnmetExpectations } from '../../http/expectations.js';
import { createHttpService, type HttpService } from '../../http/service.js';
import { loadAppModule } from '../../tick/appModule.js';
import { parseCommandLine } from '../args.js';
import type { Command, CliIo } from '../command.js';
import { describeFailure } from '../failure.js';
import { listenFailure } from '../listenFailure.js';
import { UsageError } from '../usageError.js';
import { portFlag } from '../wholeNumberFlag.js';
import { loadUserModule } from '../userModule.js';
import { EXIT_SECOND_SIGNAL } from '../../worker/process.js';

/** How long start-up waits for the database before serving anyway. */
const STARTUP_CHECK_MS = 5000;

const flagsSchema = z
  .object({
    port: portFlag().default(8080),
    host: z.string().min(1).default('127.0.0.1'),
    app: z.string().min(1).optional(),
  })
  .strict();

/** Checks the schema; a database that does not answer is only reported. */
async function checkDatabase(service: HttpService, io: CliIo): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), STARTUP_CHECK_MS);
  });
  try {
    const r = await Promise.race([service.client.ready(), late]);
    if (r === 'late') io.err(`workhorse serve: the database did not answer within ${STARTUP_CHECK_MS} ms; serving anyway (/healthz answers 503 until it does)`);
  } catch (err) {
    if (err instanceof SchemaVersionError) throw err;
    io.err(`workhorse serve: ${describeFailure(err)}; serving anyway (/healthz answers 503 until the database answers)`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A request's headers must have arrived this long after its connection
 * opened (or the last request on it), or it is a 408; Node checks every
 * CONNECTIONS_CHECK_MS. Node's own 60 s, checked every 30 s, let a client
 * that sends nothing, or a header line every few seconds, hold a connection
 * for up to 90 s; a body that does not arrive is cut at bodyTimeoutMs (10 s).
 */
const HEADERS_TIMEOUT_MS = 10_000;
const CONNECTIONS_CHECK_MS = 1_000;

/** The app on a Node HTTP server; requests Node or the adapter cannot read are answered in the API's error shape. */
function listen(service: HttpService, port: number, hostname: string, io: CliIo): Promise<Server> {
  return new Promise((resolve, reject) => {
    const listener = getRequestListener(service.app.fetch, { hostname, errorHandler: requestErrorResponse });
    const s = createServer(
      { requireHostHeader: false, headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: CONNECTIONS_CHECK_MS },
      (req, res) => {
        if (!refusedMissingHost(req, res)) void listener(req, res);
      },
    );
    answerClientErrors(s);
    answerConnect(s);
    answerUnmetExpectations(s);
    s.once('error', (err) => reject(listenFailure(err, hostname, port)));
    s.listen(port, hostname, () => {
      const info = s.address() as AddressInfo;
      io.out(`workhorse serve: listening on http://${info.address}:${info.port}`);
      resolve(s);
    });
  });
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'serve the HTTP API (signed POST /tick, /jobs, /queues, /workers, /schedules, /healthz) and the dashboard (/ui) on Node',
  usage: 'workhorse serve [--port 8080] [--host 127.0.0.1] [--app module.js]',
  help: [
    '--port N         port to listen on (default 8080; 0 picks a free one)',
    '--host H         address to bind (default 127.0.0.1; use 0.0.0.0 in a container)',
    '--app module.js  compiled module whose default export is defineApp(...) (default: WORKHORSE_APP)',
    'the environment gives the database (DATABASE_URL), the credentials (WORKHORSE_API_TOKEN, WORKHORSE_API_TOKENS,',
    'WORKHORSE_SIGNING_SECRET, the dashboard sign-in secret) and the limits; docs/http.md ("Running it") lists every variable',
  ],
  async run(argv, _env, io) {
    const { flags } = parseCommandLine(argv, { options: { port: { type: 'string' }, host: { type: 'string' }, app: { type: 'string' } } }, flagsSchema);
    const http = loadHttpEnvConfig();
    const appModule = flags.app ?? http.appModule;
    const what = flags.app ? '--app' : 'WORKHORSE_APP';
    const app = appModule ? await loadUserModule(appModule, what, (url) => loadAppModule(url, what, appModule)) : undefined;
    const service = createHttpService({ app });
    try {
      await checkDatabase(service, io);
      const server = await listen(service, flags.port, flags.host, io);
      // Once it listens: a port in use or a bad --host is the one line it prints.
      if (http.signingSecrets.length === 0) io.err('workhorse serve: no WORKHORSE_SIGNING_SECRET: POST /tick refuses every request');
      const signaturesOnApi = http.signedScopes.length > 0 && http.signingSecrets.length > 0;
      if (http.apiTokens.length === 0 && !signaturesOnApi) io.err('workhorse serve: no WORKHORSE_API_TOKEN or WORKHORSE_API_TOKENS: the API routes refuse every request');
      if (!http.sessionSecret) io.err('workhorse serve: no WORKHORSE_SESSION_SECRET: the dashboard at /ui has no sign-in (bearer headers only)');
      // The first SIGTERM or SIGINT stops taking connections and lets the requests in flight finish;
      // a second exits at once. Each says so on stderr.
      await new Promise<void>((resolve) => {
        let signals = 0;
        const stop = (signal: NodeJS.Signals) => {
          if (++signals > 1) {
            io.err(`workhorse serve: ${signal} again: exiting ${EXIT_SECOND_SIGNAL}`);
            process.exit(EXIT_SECOND_SIGNAL);
          }
          io.err(`workhorse serve: ${signal}: no new connections; the requests in flight finish, then it exits (a second signal exits at once)`);
          server.close(() => {
            process.off('SIGTERM', stop);
            process.off('SIGINT', stop);
            resolve();
          });
        };
        process.on('SIGTERM', stop);
        process.on('SIGINT', stop);
      });
    } finally {
      await service.close();
    }
    return 0;
  },
};
