// The environment a Lambda handler configures itself from: the process
// environment with every variable given as a secret (references.ts) filled
// in from Secrets Manager. Each secret is read once per container and
// cached. It is read again when it is older than `maxAgeMs` (checked at each
// invocation, so a rotation reaches a warm container without a redeploy) and
// when a caller saw its credential fail (`refresh`), but never twice within
// `minRefreshMs`, so a flood of bad requests cannot hammer Secrets Manager.
// A failed re-read keeps the last good value (and logs); a failed first read
// fails the call. `version` changes whenever a resolved value changes, so a
// caller rebuilds what it built from the old values (a pool, an app).
import { settledWithin } from '../boundedWait.js';
import { SecretUnavailableError } from '../errors.js';
import type { SecretReference } from './references.js';
import type { SecretSource } from './secretsManager.js';
import { fillTemplate } from './template.js';

export interface SecretEnvironmentOptions {
  references: SecretReference[];
  /** Called once, on the first read: only then is the SDK loaded. */
  source: () => SecretSource;
  maxAgeMs: number;
  minRefreshMs: number;
  now?: () => number;
  /** Where failed re-reads are reported (the last good value stays in use). */
  log?: (line: string, err: unknown) => void;
}

export interface ResolvedEnvironment {
  env: Readonly<Record<string, string | undefined>>;
  /** 0 before any secret is read; grows whenever a resolved value changes. */
  version: number;
}

interface CachedSecret {
  /** The variables' values from the last good read. */
  values?: Map<string, string>;
  readAt: number;
  attemptedAt: number;
  lastError?: SecretUnavailableError;
  pending?: Promise<void>;
}

export class SecretEnvironment {
  private readonly cache = new Map<string, CachedSecret>();
  private readonly byArn = new Map<string, SecretReference[]>();
  private readonly now: () => number;
  private source: SecretSource | undefined;
  private resolved: ResolvedEnvironment;

  constructor(
    private readonly base: Readonly<Record<string, string | undefined>>,
    private readonly o: SecretEnvironmentOptions,
  ) {
    this.now = o.now ?? Date.now;
    for (const r of o.references) this.byArn.set(r.arn, [...(this.byArn.get(r.arn) ?? []), r]);
    this.resolved = { env: base, version: 0 };
  }

  /** The variables that come from secrets. */
  get variables(): string[] {
    return this.o.references.map((r) => r.variable);
  }

  /**
   * The environment, reading what was never read or is older than maxAgeMs.
   * `boundMs`: the time the caller has (an invocation's time left); a read
   * still unanswered then goes on, and a secret never read fails the call
   * with SecretUnavailableError at once (one with a good value keeps it),
   * so a hung Secrets Manager does not outlast the invocation.
   */
  async current(boundMs?: number): Promise<ResolvedEnvironment> {
    const now = this.now();
    const due = [...this.byArn.keys()].filter((arn) => {
      const c = this.cache.get(arn);
      if (!c?.values) return !c || now - c.attemptedAt >= this.o.minRefreshMs || !c.lastError;
      return now - c.readAt >= this.o.maxAgeMs && now - c.attemptedAt >= this.o.minRefreshMs;
    });
    if (!(await answeredWithin(this.read(due), boundMs))) {
      const unread = [...this.byArn.keys()].find((arn) => !this.cache.get(arn)?.values);
      if (unread !== undefined) {
        const within = boundMs !== undefined && boundMs > 0 ? `within the ${boundMs} ms the invocation had left` : 'before the invocation ran out of time';
        throw new SecretUnavailableError(this.byArn.get(unread)![0]!.variable, unread, `Secrets Manager did not answer ${within}`);
      }
      return this.resolved;
    }
    for (const arn of this.byArn.keys()) {
      const c = this.cache.get(arn);
      if (!c?.values) throw c?.lastError ?? new SecretUnavailableError(this.byArn.get(arn)![0]!.variable, arn, 'not read yet');
    }
    return this.resolved;
  }

  /**
   * Reads again the secrets behind the variables `select` picks, unless they
   * were read within minRefreshMs. True when a resolved value changed.
   * `boundMs` as for current(): a read still unanswered then goes on, and
   * this answers false (nothing changed yet).
   */
  async refresh(select: (variable: string) => boolean, boundMs?: number): Promise<boolean> {
    const now = this.now();
    const arns = [...this.byArn.entries()]
      .filter(([, refs]) => refs.some((r) => select(r.variable)))
      .map(([arn]) => arn)
      .filter((arn) => now - (this.cache.get(arn)?.attemptedAt ?? -Infinity) >= this.o.minRefreshMs);
    const before = this.resolved.version;
    if (!(await answeredWithin(this.read(arns), boundMs))) return false;
    return this.resolved.version !== before;
  }

  private async read(arns: string[]): Promise<void> {
    if (arns.length === 0) return;
    await Promise.all(arns.map((arn) => this.readOne(arn)));
    this.rebuild();
  }

  private readOne(arn: string): Promise<void> {
    let c = this.cache.get(arn);
    if (!c) this.cache.set(arn, (c = { readAt: -Infinity, attemptedAt: -Infinity }));
    if (c.pending) return c.pending;
    const entry = c;
    entry.attemptedAt = this.now();
    this.source ??= this.o.source();
    entry.pending = this.source
      .read(arn)
      .then((secret) => this.valuesOf(arn, secret))
      .then(
        (values) => {
          entry.values = values;
          entry.readAt = this.now();
          entry.lastError = undefined;
        },
        (err: unknown) => {
          const variable = this.byArn.get(arn)![0]!.variable;
          entry.lastError =
            err instanceof SecretUnavailableError ? err : new SecretUnavailableError(variable, arn, describe(err), { cause: err });
          if (entry.values) this.o.log?.(`[workhorse] could not re-read ${variable}'s secret; keeping the last value`, entry.lastError);
        },
      )
      .finally(() => {
        entry.pending = undefined;
      });
    return entry.pending;
  }

  /** Each variable's value from one secret, or a SecretUnavailableError when the secret does not fit its template. */
  private valuesOf(arn: string, secret: string): Map<string, string> {
    const values = new Map<string, string>();
    for (const r of this.byArn.get(arn)!) {
      try {
        values.set(r.variable, r.template ? fillTemplate(r.template, secret) : secret);
      } catch (err) {
        throw new SecretUnavailableError(r.variable, arn, (err as Error).message);
      }
    }
    return values;
  }

  private rebuild(): void {
    const env: Record<string, string | undefined> = { ...this.base };
    for (const c of this.cache.values()) for (const [k, v] of c.values ?? []) env[k] = v;
    const changed = this.o.references.some((r) => env[r.variable] !== this.resolved.env[r.variable]);
    if (changed) this.resolved = { env, version: this.resolved.version + 1 };
  }
}

/** Whether `reading` (which records its failures, never rejects) ended within `boundMs`; always, with no bound. A read left behind goes on. */
async function answeredWithin(reading: Promise<void>, boundMs: number | undefined): Promise<boolean> {
  if (boundMs === undefined) {
    await reading;
    return true;
  }
  return settledWithin(reading, Math.max(0, boundMs));
}

/** An SDK error's name and message (they never hold the secret's value). */
function describe(err: unknown): string {
  if (err instanceof Error) return err.name && err.name !== 'Error' ? `${err.name}: ${err.message}` : err.message;
  return String(err);
}
