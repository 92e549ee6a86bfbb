// `workhorse worker <module>`: loads a compiled module whose default export
// is a defineWorkerProcess(...) definition and runs it with signal handling.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ValidationError } from '../../errors.js';
import { runWorkerProcess, type WorkerProcessDefinition } from '../../worker/process.js';
import type { Command } from '../command.js';

export const workerCommand: Command = {
  name: 'worker',
  summary: 'run the workers a compiled defineWorkerProcess() module describes; SIGTERM drains, a second signal exits',
  usage: 'workhorse worker <module.js>',
  async run(argv, _env, io) {
    const [file] = argv;
    if (!file) throw new ValidationError('workhorse worker: give the path of a module exporting defineWorkerProcess(...) as default');
    const mod = (await import(pathToFileURL(resolve(file)).href)) as { default?: WorkerProcessDefinition };
    const def = mod.default;
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
