// Creates a directory and its missing parents, one level at a time. Node's
// `mkdir(dir, { recursive: true })` never returns for a path whose parent
// exists but cannot hold it, such as one under /proc or below a dangling
// symlink (mkdir answers ENOENT, the parent "exists", and Node retries
// forever at 100% CPU); here the second ENOENT is final, and a path that is
// in the way is named.
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

function codeOf(err: unknown): unknown {
  return (err as { code?: unknown } | null)?.code;
}

export async function ensureDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir);
    return;
  } catch (err) {
    if (codeOf(err) === 'EEXIST') {
      const s = await stat(dir).catch(() => undefined);
      if (s?.isDirectory()) return;
      throw new Error(`cannot create the directory ${dir}: something that is not a directory is in the way (a file, or a dangling symlink)`, { cause: err });
    }
    if (codeOf(err) !== 'ENOENT') throw new Error(`cannot create the directory ${dir}: ${(err as Error).message}`, { cause: err });
  }
  const parent = dirname(dir);
  if (parent === dir) throw new Error(`cannot create the directory ${dir}`);
  await ensureDirectory(parent);
  try {
    await mkdir(dir);
  } catch (err) {
    if (codeOf(err) === 'EEXIST' && (await stat(dir).catch(() => undefined))?.isDirectory()) return;
    throw new Error(`cannot create the directory ${dir}: ${(err as Error).message}`, { cause: err });
  }
}
