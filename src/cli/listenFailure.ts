// Why a server of the CLI's (serve, demo --ui) could not listen: a --host
// this machine cannot bind (no such name, not one of its addresses) is the
// flag's fault, a UsageError (exit 2); anything else names the address
// (never "cannot reach the database").
import { WorkhorseError } from '../errors.js';
import { UsageError } from './usageError.js';

const BAD_HOST_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EADDRNOTAVAIL']);

export function listenFailure(err: unknown, hostname: string, port: number): Error {
  const code = (err as { code?: unknown } | null)?.code;
  const what = `cannot listen on ${hostname}:${port}: ${err instanceof Error ? err.message : String(err)}`;
  if (typeof code === 'string' && BAD_HOST_CODES.has(code)) return new UsageError(`--host ${JSON.stringify(hostname)} is not an address of this machine (${what})`);
  return new WorkhorseError('listen_failed', what, { cause: err });
}
