// The `workhorse` command line: a table of commands, each in its own module.
import { loadEnvConfig } from '../config.js';
import { WorkhorseError } from '../errors.js';
import type { Command, CliIo } from './command.js';
import { demoCommand } from './commands/demo.js';
import { migrateCommand } from './commands/migrate.js';
import { serveCommand } from './commands/serve.js';
import { tickCommand } from './commands/tick.js';
import { workerCommand } from './commands/worker.js';

export const commands: Command[] = [migrateCommand, workerCommand, tickCommand, serveCommand, demoCommand];

function help(io: CliIo): void {
  io.out('usage: workhorse <command> [options]\n');
  for (const c of commands) io.out(`  ${c.usage}\n      ${c.summary}`);
}

export async function main(argv: string[], io: CliIo = { out: console.log, err: console.error }): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    help(io);
    return name ? 0 : 2;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.err(`workhorse: unknown command "${name}"`);
    help(io);
    return 2;
  }
  try {
    return await command.run(rest, loadEnvConfig(), io);
  } catch (err) {
    if (err instanceof WorkhorseError) {
      io.err(`workhorse ${name}: ${err.message}`);
      return 2;
    }
    throw err;
  }
}

const invokedDirectly = process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!);
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
