// `workhorse worker <module>`: loads a compiled module whose default export
// is a defineWorkerProcess(...) definition and runs it with signal
// handling. The first SIGTERM/SIGINT/SIGHUP drains and exits 0 (3 when outcomes
// were given up during the drain: process.ts, stopReport); a second signal,
// or the drain deadline, exits at once (process.exit) with a non-zero code,
// whatever the handlers are doing: PostgreSQL recovers their leases. One
// log line per phase.
import * as z from 'zod';
import { ValidationError } from '../../errors.js';
import { isWorkhorseApp } from '../../app/defineApp.js';
import { EXIT_FAILED, runWorkerProcess, stopReport, type WorkerProcessDefinition } from '../../worker/process.js';
import { parseCommandLine } from '../args.js';
import type { Command } from '../command.js';
import { stopSignalsFor } from '../stopSignals.js';
import { loadUserModule } from '../userModule.js';

/**
 * The signals that drain. SIGHUP (the terminal closed, or a process
 * manager's reload) is one: left to Node it ended the process at once,
 * leaving the running jobs' leases to expire and charging their attempts.
 */

export const workerCommand: Command = {
  name: 'worker',
  summary: 'run the workers a compiled defineWorkerProcess() module describes; SIGTERM (or SIGINT, SIGHUP) drains, a second signal or the drain deadline exits at once',
  usage: 'workhorse worker <module.js>',
  help: [
    '<module.js>   compiled module whose default export is defineWorkerProcess({ client (or adapter), workers, probes? })',
    'exit codes    0 drained; 3 drained, but outcomes were given up during the drain (recovery runs those jobs again); 1 a worker failed, or the process exited under running workers (a handler\'s process.exit()); 124 the drain deadline passed; 130 a second signal',
  ],
  async run(argv, _env, io) {
    // A signal before the workers run (the module loading, the database waited for) exits 0: nothing is claimed yet.
    const stop = stopSignalsFor('worker', io.err);
    try {
      const { positionals } = parseCommandLine(argv, { options: {}, positionals: ['module.js'], required: 1 }, z.object({}));
      const file = positionals[0]!;
      const def = await loadUserModule(file, 'worker module', async (url) => ((await import(url)) as { default?: WorkerProcessDefinition }).default);
      if (!def || typeof def !== 'object' || (typeof def.adapter !== 'function' && typeof def.client !== 'function') || !Array.isArray(def.workers)) {
        // An app module (defineApp, what a tick runs) is the likeliest mistake: say how to make it a worker process.
        const app = isWorkhorseApp(def)
          ? ': it is a defineApp() app; export default defineWorkerProcess({ adapter, workers: [appWorker(app)] }) from a module of its own (docs/workers.md)'
          : '';
        throw new ValidationError(`${file}: the default export must be defineWorkerProcess({ client (or adapter), workers })${app}`);
      }
      io.err(`[workhorse] starting ${def.workers.length} worker(s) from ${file}`);
      let ending = false;
      const proc = await runWorkerProcess(def, {
        log: io.err,
        exit: (code) => {
          ending = true;
          process.exit(code);
        },
      });
      stop.started((signal) => proc.shutdown(signal));
      io.err(`[workhorse] ${proc.workers.length} worker(s) running: ${proc.workers.map((w) => w.workerId).join(', ')}`);
      // The process exiting under the running workers (a handler's process.exit(0)) said nothing and exited 0,
      // which a supervisor takes for a clean drain: one line, and a failure's exit code.
      // An error that escaped handler code (thrown in a timer, a rejection nobody awaited) ends the process too:
      // Node's monitor hook names which, without changing what Node does with it.
      let escaped: string | undefined;
      const onEscape = (_err: unknown, origin: string) => {
        escaped ??=
          origin === 'unhandledRejection'
            ? 'a rejected promise nobody handled (one a handler did not await), its stack below'
            : "an exception thrown outside any handler's await (in a timer or an event listener), its stack below";
      };
      process.on('uncaughtExceptionMonitor', onEscape);
      const unexpectedExit = (exitCode: number) => {
        if (ending) return;
        const held = proc.workers.reduce((n, w) => n + w.runtimeState().active, 0);
        io.err(
          `[workhorse] the process is exiting (code ${exitCode}) while its workers run: ${escaped ?? 'something called process.exit() (a handler?)'}; ` +
            `${held} running job(s) stay leased until recovery takes them (a lease after their last heartbeat)${exitCode === 0 ? `; exiting ${EXIT_FAILED} instead of 0` : ''}`,
        );
        if (exitCode === 0) process.exitCode = EXIT_FAILED;
      };
      process.on('exit', unexpectedExit);
      const how = await proc.done.finally(() => {
        ending = true;
        process.off('exit', unexpectedExit);
        process.off('uncaughtExceptionMonitor', onEscape);
      });
      const { code, line } = stopReport(how, proc.droppedOutcomes());
      io.err(line);
      return code;
    } finally {
      stop.release();
    }
  },
};
