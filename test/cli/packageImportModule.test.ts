// In a checkout of workhorse, `node bin/workhorse.js worker app.ts` runs the
// CLI from the TypeScript sources, while the module's `import 'workhorse'`
// loads the compiled dist/: two copies, whose Client classes differ. The
// refusal said "import both from the same place", which a user who imported
// from one place only cannot act on; it now names the two copies and the two
// ways out. A real CLI process.
import { expect, it } from 'vitest';
import { cliEnv, runCli } from './support/runCli.js';

it("a .ts worker module importing 'workhorse' in a checkout: exit 2, naming the copies and what to do", async () => {
  const r = await runCli(['worker', 'test/fixtures/packageImportWorker.ts'], cliEnv({ DATABASE_URL: 'postgres://127.0.0.1:1/none' }));
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(/runs from workhorse's TypeScript sources \(src\/\): most likely the module imports 'workhorse', which loads its compiled dist\//);
  expect(r.stderr).toMatch(/import from the checkout's src\/index\.ts in it, or compile the module and pass the \.js/);
}, 60_000);
