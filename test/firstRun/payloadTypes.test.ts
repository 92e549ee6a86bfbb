// Payload types at compile time: a typed job definition refuses a wrong
// payload in enqueue and in every enqueueMany item, and a job type named by
// string stays untyped; a step's answer is typed as the JSON it records (a
// Date comes back as a string). The TypeScript compiler checks two fixtures with the
// repository's own settings: one must compile cleanly, the other must fail
// on exactly the lines it marks, with the error each line names.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const fixtures = join(repoRoot, 'test', 'fixtures', 'payload-types');
const right = join(fixtures, 'rightPayloads.ts');
const wrong = join(fixtures, 'wrongPayloads.ts');

interface Found {
  line: number;
  message: string;
}

let diagnostics: Map<string, Found[]>;

beforeAll(() => {
  const config = ts.getParsedCommandLineOfConfigFile(join(repoRoot, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (!config) throw new Error('cannot read tsconfig.json');
  const program = ts.createProgram([right, wrong], { ...config.options, noEmit: true });
  diagnostics = new Map([
    [right, []],
    [wrong, []],
  ]);
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const file = d.file?.fileName ?? '(global)';
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    const list = diagnostics.get(file) ?? [];
    list.push({ line, message: ts.flattenDiagnosticMessageText(d.messageText, '\n') });
    diagnostics.set(file, list);
  }
}, 120_000);

/** The `// error: <text>` marks of a fixture, by line. */
function expectedErrors(file: string): Found[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((text, i) => {
      // A mark follows code; comment lines (like the fixture's header) are not marks.
      const m = text.trimStart().startsWith('//') ? null : /\/\/ error: (.+)$/.exec(text);
      return m ? [{ line: i + 1, message: m[1]!.trim() }] : [];
    });
}

describe('payload types', () => {
  it('compiles typed payloads, mixed batches and untyped string job types without a diagnostic', () => {
    expect(diagnostics.get(right)).toEqual([]);
    // Nothing outside the two fixtures (the sources they import) complained either.
    expect([...diagnostics.keys()].filter((f) => f !== right && f !== wrong)).toEqual([]);
  });

  it('refuses each wrong payload on the line that has it, with the expected error, and nowhere else', () => {
    const expected = expectedErrors(wrong);
    expect(expected.length).toBeGreaterThanOrEqual(7);
    const found = diagnostics.get(wrong)!;
    expect(found.map((f) => f.line)).toEqual(expected.map((e) => e.line));
    for (const [i, e] of expected.entries()) expect(found[i]!.message, `line ${e.line}`).toContain(e.message);
  });
});
