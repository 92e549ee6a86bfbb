// `workhorse worker <module>`: loads a compiled module whose default export
// is a defineWorkerProcess(...) definition and runs it with signal handling.
import * as z from 'zod';
import { ValidationError } from '../../errors.js';
import { runWorkerProcess, type WorkerProcessDefinition } from '../../worker/process.js';
import { parseCommandLine } from '../args.js';
import type { Command } from '../command.js';
import { loadUserModule } from '../userModule.js';

export const workerCommand: Command = {
  name: 'worker',
  summary: 'run the workers a compiled defineWorkerProcess() module describes; SIGTERM drains, a second signal exits',
  usage: 'workhorse worker <module.js>',
  help: ['<module.js>   compiled module whose default export is defineWorkerProcess({ client, workers })'],
  async run(argv, _env, io) {
    const { positionals } = parseCommandLine(argv, { options: {}, positionals: ['module.js'], required: 1 }, z.object({}));
    const file = positionals[0]!;
    const def = await loadUserModule(file, 'worker module', async (url) => ((await import(url)) as { default?: WorkerProcessDefinition }).default);
    if (!def || typeof def.client !== 'function' || !Array.isArray(def.workers)) {
      throw new ValidationError(`${file}: the default export must be defineWorkerProcess({ client, workers })`);
    }
    const proc = await runWorkerProcess(def, io.err);
    process.on('SIGTERM', proc.shutdown);
    process.on('SIGINT', proc.shutdown);
    io.err(`[workhorse] ${proc.workers.length} worker(s) running: ${proc.workers.map((w) => w.workerId).join(', ')}`);
    const how = await proc.done;
    process.off('SIGTERM', proc.shutdown);
    process.off('SIGINT', proc.shutdown);
    return how === 'drained' ? 0 : 130;
  },
};
