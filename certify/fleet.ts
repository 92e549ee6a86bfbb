// The certification's process fleet: W child processes (workers or tick
// invokers), each replaced when it exits, and a killer that SIGKILLs a
// random one (among those that are up) every K ms. stop() ends the killer, asks every child to drain
// (SIGTERM) and waits; a child that does not exit in time is killed.
import { fork, type ChildProcess } from 'node:child_process';
import { prepareChildEntry, type ChildEntry } from './childBundle.js';
import type { ChildConfig } from './childConfig.js';

export interface FleetOptions {
  mode: 'process' | 'tick';
  size: number;
  killEveryMs: number;
  config: ChildConfig;
  /** Skip the killer (used for a clean final drain). */
  noKiller?: boolean;
}

export class Fleet {
  private readonly children = new Set<ChildProcess>();
  /** Children that reported they are up (registered and running). */
  private readonly ready = new WeakSet<ChildProcess>();
  private killer: NodeJS.Timeout | undefined;
  private stopping = false;
  private entry: ChildEntry | undefined;
  /** Children the killer SIGKILLed. */
  killed = 0;
  /** Children started, replacements included. */
  started = 0;
  /** Children that exited on their own with a non-zero code (not killed, not stopped). */
  crashed = 0;
  /** How each child still running at stop() exited: 0 is a clean drain. */
  readonly stopExits: (number | null)[] = [];

  /** Children running now. */
  get alive(): number {
    return [...this.children].filter((c) => c.exitCode === null && c.signalCode === null).length;
  }

  /** Pids of the children that reported they are up. */
  get readyPids(): number[] {
    return [...this.children].filter((c) => this.ready.has(c)).map((c) => c.pid!);
  }

  constructor(private readonly o: FleetOptions) {}

  async start(): Promise<void> {
    this.entry = await prepareChildEntry(new URL(this.o.mode === 'tick' ? './tickChild' : './workerChild', import.meta.url));
    for (let i = 0; i < this.o.size; i++) this.spawn();
    if (!this.o.noKiller) this.killer = setInterval(() => this.killOne(), this.o.killEveryMs);
  }

  private spawn(): void {
    const { file, execArgv } = this.entry!;
    const child = fork(file, [JSON.stringify(this.o.config)], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.started++;
    this.children.add(child);
    child.on('message', (m: unknown) => {
      if ((m as { ready?: boolean } | null)?.ready) this.ready.add(child);
    });
    child.once('exit', (code, signal) => {
      this.children.delete(child);
      if (signal !== 'SIGKILL' && code !== 0 && !this.stopping) this.crashed++;
      if (!this.stopping) this.spawn();
    });
  }

  /** Kills a random child among those that are up; one still starting holds no leases yet. */
  private killOne(): void {
    const live = [...this.children].filter((c) => this.ready.has(c) && c.exitCode === null && c.signalCode === null);
    const victim = live[Math.floor(Math.random() * live.length)];
    if (!victim) return;
    this.killed++;
    victim.kill('SIGKILL');
  }

  /** Stops the killer, SIGTERMs every child and waits (SIGKILL after `graceMs`). */
  async stop(graceMs = 30_000): Promise<void> {
    this.stopping = true;
    if (this.killer) clearInterval(this.killer);
    const live = [...this.children];
    await Promise.all(
      live.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const t = setTimeout(() => c.kill('SIGKILL'), graceMs);
            c.once('exit', (code) => {
              clearTimeout(t);
              this.stopExits.push(code);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      ),
    );
    await this.entry?.dispose();
  }
}
