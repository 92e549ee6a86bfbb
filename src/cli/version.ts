// `workhorse --version`: the version of the installed package, read from its
// own package.json (found by walking up from this module, so it works from
// src/ under a TypeScript loader and from dist/ as npm installs it).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';

const PackageJson = z.object({ name: z.literal('workhorse'), version: z.string().min(1) });

export const VERSION_FLAGS = new Set(['--version', '-V']);

export function packageVersion(start = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = start; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const parsed = PackageJson.safeParse(JSON.parse(readFileSync(file, 'utf8')));
      if (parsed.success) return parsed.data.version;
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}
