// The parent side of the benchmark's child processes: forks one or more
// children for a scenario, starts them together once all are ready, counts
// the jobs they report, tells drain workers to stop once the expected count
// has started, and collects each child's result.
import { fork, type ChildProcess } from 'node:child_process';
import { prepareChildEntry, type ChildEntry } from '../../certify/childBundle.js';
import type { ChildMessage, ChildTask, ParentMessage } from './messages.js';

let entry: Promise<ChildEntry> | undefined;

/** The child entry, bundled once per benchmark run. */
function childEntry(): Promise<ChildEntry> {
  entry ??= prepareChildEntry(new URL('./main', import.meta.url));
  return entry;
}

/** Removes the bundled child entry (call once at the end of the run). */
export async function disposeChildEntry(): Promise<void> {
  if (entry) await (await entry).dispose();
  entry = undefined;
}

export interface ChildrenOutcome {
  results: Record<string, unknown>[];
  /** First handler start reported by any child (epoch ms), if any. */
  firstAt: number | undefined;
  /** When the reported count reached `expect` (epoch ms), if it did. */
  doneAt: number | undefined;
  counted: number;
}

export interface RunChildrenOptions {
  /** Stop the children once this many jobs have started (drain scenarios). */
  expect?: number;
  /** Runs once `expect` is reached, before the children are told to stop. */
  beforeStop?: () => Promise<void>;
  timeoutMs?: number;
}

export async function runChildren(tasks: ChildTask[], o: RunChildrenOptions = {}): Promise<ChildrenOutcome> {
  const { file, execArgv } = await childEntry();
  const children: ChildProcess[] = tasks.map((t) =>
    fork(file, [JSON.stringify(t)], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  const tell = (m: ParentMessage) => {
    for (const c of children) if (c.connected) c.send(m);
  };
  let ready = 0;
  let counted = 0;
  let firstAt: number | undefined;
  let doneAt: number | undefined;
  let stopped = false;
  const stopAll = () => {
    if (stopped) return;
    stopped = true;
    tell({ cmd: 'stop' });
  };
  const timer = setTimeout(() => {
    for (const c of children) c.kill('SIGKILL');
  }, o.timeoutMs ?? 600_000);

  const results = await Promise.all(
    children.map(
      (child, index) =>
        new Promise<Record<string, unknown>>((resolve, reject) => {
          let result: Record<string, unknown> | undefined;
          let error: string | undefined;
          child.on('message', (m: ChildMessage) => {
            if (m.ev === 'ready' && ++ready === children.length) tell({ cmd: 'go' });
            else if (m.ev === 'first') firstAt = firstAt === undefined ? m.at : Math.min(firstAt, m.at);
            else if (m.ev === 'progress') {
              counted += m.n;
              if (o.expect !== undefined && counted >= o.expect && doneAt === undefined) {
                doneAt = m.at;
                void (o.beforeStop ?? (async () => undefined))().finally(stopAll);
              }
            } else if (m.ev === 'result') result = m.data;
            else if (m.ev === 'error') error = m.message;
          });
          child.on('exit', (code, signal) => {
            if (result) resolve(result);
            else {
              // A failed child must not leave its siblings waiting for `go` or `stop`.
              for (const c of children) if (c !== child) c.kill('SIGKILL');
              reject(new Error(`bench child ${index} (${tasks[index]!.system} ${tasks[index]!.scenario.kind}) ended ${signal ?? code}: ${error ?? 'no result'}`));
            }
          });
        }),
    ),
  ).finally(() => clearTimeout(timer));
  return { results, firstAt, doneAt, counted };
}
