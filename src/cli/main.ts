// The `workhorse` command line: a table of commands, each in its own module.
// `workhorse <command> --help` prints that command's usage, `workhorse
// --version` the package's version (each refuses an extra argument, as
// `help <command>` does);
// `--verbose`
// anywhere adds the stack to a failure. Every failure is one line
// `workhorse <command>: <what>` and exit code 2 (usage or configuration)
// or 1 (runtime), see failure.ts.
import { loadEnvConfig } from '../config.js';
import { ignoreClosedPipes } from './closedPipes.js';
import type { Command, CliIo } from './command.js';
import { demoCommand } from './commands/demo.js';
import { jobsCommand } from './commands/jobs.js';
import { migrateCommand } from './commands/migrate.js';
import { queuesCommand } from './commands/queues.js';
import { serveCommand } from './commands/serve.js';
import { tickCommand } from './commands/tick.js';
import { workerCommand } from './commands/worker.js';
import { exitCodeFor, failureLine } from './failure.js';
import { UsageError } from './usageError.js';
import { packageVersion, VERSION_FLAGS } from './version.js';
import { terminalLines } from '../terminalText.js';

export const commands: Command[] = [migrateCommand, workerCommand, tickCommand, serveCommand, jobsCommand, queuesCommand, demoCommand];

const HELP_FLAGS = new Set(['--help', '-h']);

function overview(io: CliIo, print: (line: string) => void = io.out): void {
  print('usage: workhorse <command> [options]   (workhorse <command> --help for its options; --verbose adds stacks to errors; --version prints the version)\n');
  for (const c of commands) print(`  ${c.usage}\n      ${c.summary}`);
}

function commandHelp(c: Command, io: CliIo): void {
  io.out(`usage: ${c.usage}\n\n${c.summary}\n`);
  for (const line of c.help) io.out(`  ${line}`);
}

/** Where options end: at `--` (after it, `--help` is an argument like any other). */
function optionsEnd(argv: string[]): number {
  const end = argv.indexOf('--');
  return end < 0 ? argv.length : end;
}

function options(argv: string[]): string[] {
  return argv.slice(0, optionsEnd(argv));
}

function unknownCommand(name: string, io: CliIo): number {
  io.err(`workhorse: unknown command "${name}" (one of ${commands.map((c) => c.name).join(', ')}; workhorse --help lists them)`);
  return 2;
}

function unexpected(flag: string, takes: string, extra: string[], io: CliIo): number {
  const what = extra.map((a) => `"${a}"`).join(', ');
  io.err(`workhorse ${flag}: unexpected argument${extra.length > 1 ? 's' : ''} ${what} (usage: workhorse ${flag}${takes ? ` ${takes}` : ''})`);
  return 2;
}

export async function main(argv: string[], given: CliIo = { out: console.log, err: console.error }): Promise<number> {
  // Every line goes out with its control characters escaped: a job's error or payload, a handler's log
  // line through a worker's log, an argument echoed in a usage error (terminalText.ts).
  const io: CliIo = { out: (line) => given.out(terminalLines(line)), err: (line) => given.err(terminalLines(line)) };
  const end = optionsEnd(argv);
  const verbose = options(argv).includes('--verbose');
  const args = argv.filter((a, i) => a !== '--verbose' || i > end);
  const [name, ...rest] = args;
  if (!name) {
    overview(io, io.err);
    return 2;
  }
  // `help`, `--help` and `--version` take at most a command name, and `--version` nothing: anything else is a usage error, not ignored.
  if (name === 'help' || HELP_FLAGS.has(name)) {
    const [topicName, ...extra] = rest;
    // An option here (`--help --help`, `help -x`) is not a command name: say it is unexpected, not an unknown command.
    if (topicName?.startsWith('-')) return unexpected(name, '[command]', rest, io);
    const topic = topicName === undefined ? undefined : commands.find((c) => c.name === topicName);
    if (topicName !== undefined && !topic) return unknownCommand(topicName, io);
    if (extra.length > 0) return unexpected(name, '[command]', extra, io);
    if (topic) commandHelp(topic, io);
    else overview(io);
    return 0;
  }
  if (VERSION_FLAGS.has(name)) {
    if (rest.length > 0) return unexpected(name, '', rest, io);
    io.out(`workhorse ${packageVersion()}`);
    return 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) return unknownCommand(name, io);
  if (options(rest).some((a) => HELP_FLAGS.has(a))) {
    // `<command> --help` takes nothing more, as `help <command>` does.
    const extra = rest.filter((a) => !HELP_FLAGS.has(a));
    if (extra.length > 0) return unexpected(`${name} --help`, '', extra, io);
    commandHelp(command, io);
    return 0;
  }
  try {
    return await command.run(rest, loadEnvConfig(), io);
  } catch (err) {
    const usage = err instanceof UsageError ? ` (usage: ${command.usage})` : '';
    io.err(failureLine(name, err) + usage);
    if (verbose) io.err(stacksOf(err));
    return exitCodeFor(err);
  }
}

/**
 * The stack of a failure and of each cause under it (`--verbose`): a module
 * that failed to load is a ModuleLoadError whose own stack holds only CLI
 * frames, while its cause says where in the user's file it broke (a syntax
 * error's file, line and caret; the line that threw).
 */
function stacksOf(err: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  for (let e: unknown = err; e !== undefined && e !== null && !seen.has(e) && parts.length < 5; e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    const text = e instanceof Error ? (e.stack ?? `${e.name}: ${e.message}`) : String(e);
    parts.push(parts.length === 0 ? text : `caused by: ${text}`);
    if (!(e instanceof Error)) break;
  }
  return parts.join('\n');
}

export { ignoreClosedPipes };

/** How long the process may outlive its command before it is ended. */
const LINGER_MS = 1_000;

/**
 * Ends the CLI process with `code` once its command returned. It exits by
 * itself when nothing is left to run; if something still is a second later
 * (a handler that ignored its abort signal at a tick's deadline or a
 * worker's drain deadline, a connection the app left open), it is ended
 * then, saying so: a tick must not outlive its budget, and a drained worker
 * must not keep running after it said it exits.
 */
export function endProcess(code: number, io: Pick<CliIo, 'err'> = { err: console.error }): void {
  process.exitCode = code;
  setTimeout(() => {
    io.err(`[workhorse] exiting ${code}: work was still running in this process ${LINGER_MS} ms after the command ended (a handler that ignored its abort signal, a connection or timer the app left open, or a module still loading)`);
    process.exit(code);
  }, LINGER_MS).unref();
}

const invokedDirectly = process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!);
if (invokedDirectly) {
  ignoreClosedPipes();
  void main(process.argv.slice(2)).then((code) => endProcess(code));
}
