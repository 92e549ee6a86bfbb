// Trims a bundle's source map to the code this project and the app wrote:
// each run of mappings into node_modules becomes one "unmapped" segment.
// With --enable-source-maps, Node decodes every mapping of a bundle when it
// loads it, on every cold start; dependencies (zod, pg) are about
// three quarters of the mappings and their frames are rarely the ones a
// stack trace is read for. Frames inside a dependency then show the
// bundle's own position (index.mjs:line:column); the app's and workhorse's
// frames still map to their files and lines.
import { readFileSync, writeFileSync } from 'node:fs';

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGIT = new Map([...BASE64].map((c, i) => [c, i]));

/** One segment's fields (VLQ, each relative to the previous segment's). */
function decodeSegment(segment: string): number[] {
  const fields: number[] = [];
  let value = 0;
  let shift = 0;
  for (const ch of segment) {
    const digit = DIGIT.get(ch);
    if (digit === undefined) throw new Error(`source map: invalid mapping character "${ch}"`);
    value += (digit & 31) << shift;
    if (digit & 32) shift += 5;
    else {
      fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return fields;
}

function encode(n: number): string {
  let v = n < 0 ? (-n << 1) | 1 : n << 1;
  let out = '';
  do {
    let digit = v & 31;
    v >>>= 5;
    if (v) digit |= 32;
    out += BASE64[digit];
  } while (v);
  return out;
}

interface SourceMapV3 {
  version: 3;
  sources: string[];
  names: string[];
  mappings: string;
}

const isDependency = (source: string) => /(^|[\\/])node_modules[\\/]/.test(source);

/** The map with every run of mappings into a source `drop` picks (default: under node_modules) left unmapped. */
export function ownMappingsOnly(map: SourceMapV3, drop: (source: string) => boolean = isDependency): SourceMapV3 {
  const keep = map.sources.map((s) => !drop(s));
  // Absolute positions as decoded, and the last ones written (fields are relative).
  const at = { source: 0, line: 0, column: 0, name: 0 };
  const written = { source: 0, line: 0, column: 0, name: 0 };
  const lines = map.mappings.split(';').map((line) => {
    let generated = 0;
    let writtenGenerated = 0;
    let unmapped = false;
    const kept: string[] = [];
    for (const segment of line ? line.split(',') : []) {
      const f = decodeSegment(segment);
      generated += f[0]!;
      if (f.length >= 4) {
        at.source += f[1]!;
        at.line += f[2]!;
        at.column += f[3]!;
        if (f.length === 5) at.name += f[4]!;
      }
      if (f.length < 4 || !keep[at.source]) {
        // One column-only segment ends the previous mapping here (a lookup
        // inside the run finds no source, not the mapping before it, even
        // one on an earlier line), then the run needs nothing more.
        if (!unmapped) {
          kept.push(encode(generated - writtenGenerated));
          writtenGenerated = generated;
        }
        unmapped = true;
        continue;
      }
      unmapped = false;
      let out = encode(generated - writtenGenerated) + encode(at.source - written.source) + encode(at.line - written.line) + encode(at.column - written.column);
      if (f.length === 5) {
        out += encode(at.name - written.name);
        written.name = at.name;
      }
      writtenGenerated = generated;
      written.source = at.source;
      written.line = at.line;
      written.column = at.column;
      kept.push(out);
    }
    return kept.join(',');
  });
  return { ...map, mappings: lines.join(';') };
}

/** What a source `alsoDrop` picks is named in the map (it is unmapped, so the name is never shown). */
export const DROPPED_SOURCE = 'workhorse:generated';

/**
 * Rewrites the source map file in place; `alsoDrop` picks more sources to
 * leave unmapped, and renames them DROPPED_SOURCE: a file written to a new
 * temporary directory on every build (the bundle's injected shim) put that
 * directory's random name in the map, so every synth hashed a different
 * asset (a new build id, a migration re-run, every function's code updated)
 * for unchanged code.
 */
export function trimSourceMapFile(file: string, alsoDrop: (source: string) => boolean = () => false): void {
  const map = JSON.parse(readFileSync(file, 'utf8')) as SourceMapV3;
  const trimmed = ownMappingsOnly(map, (s) => isDependency(s) || alsoDrop(s));
  writeFileSync(file, JSON.stringify({ ...trimmed, sources: trimmed.sources.map((s) => (alsoDrop(s) ? DROPPED_SOURCE : s)) }));
}
