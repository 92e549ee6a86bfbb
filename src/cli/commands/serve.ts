// `workhorse serve`: the HTTP app on @hono/node-server, for local use and
// containers. The app module (--app or WORKHORSE_APP) supplies the job types
// POST /jobs accepts and the handlers POST /tick runs. SIGTERM or SIGINT
// stops accepting connections, lets requests in flight finish, closes the
// pool and exits 0.
import { serve } from '@hono/node-server';
import { z } from 'zod';
import { loadHttpEnvConfig } from '../../config.js';
import { createHttpService } from '../../http/service.js';
import { loadAppModule } from '../../tick/appModule.js';
import { parseFlags } from '../args.js';
import type { Command } from '../command.js';

const flagsSchema = z
  .object({
    port: z
      .string()
      .regex(/^[0-9]{1,5}$/, 'port is a number')
      .transform(Number)
      .pipe(z.number().int().min(0).max(65535))
      .default(8080),
    host: z.string().min(1).default('127.0.0.1'),
    app: z.string().min(1).optional(),
  })
  .strict();

export const serveCommand: Command = {
  name: 'serve',
  summary: 'serve the HTTP API (signed POST /tick, /jobs, /queues, /workers, /schedules, /healthz) on Node',
  usage: 'workhorse serve [--port 8080] [--host 127.0.0.1] [--app module.js]',
  async run(argv, _env, io) {
    const { flags } = parseFlags(
      argv,
      { port: { type: 'string' }, host: { type: 'string' }, app: { type: 'string' } },
      flagsSchema,
      'serve',
    );
    const http = loadHttpEnvConfig();
    const appModule = flags.app ?? http.appModule;
    const app = appModule ? await loadAppModule(appModule, flags.app ? '--app' : 'WORKHORSE_APP') : undefined;
    const service = createHttpService({ app });
    await service.client.ready();
    if (http.signingSecrets.length === 0) io.err('[workhorse] no WORKHORSE_SIGNING_SECRET: POST /tick refuses every request');
    if (http.signingSecrets.length === 0 && !http.apiToken) io.err('[workhorse] no WORKHORSE_API_TOKEN either: the API refuses every request');

    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: service.app.fetch, port: flags.port, hostname: flags.host }, (info) => {
        io.out(`workhorse serve: listening on http://${info.address}:${info.port}`);
        resolve(s);
      });
    });
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
        server.close(() => resolve());
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    });
    await service.close();
    return 0;
  },
};
