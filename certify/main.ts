// `npm run certify`: the crash certification from the command line. Exits 0
// when every guarantee held, 1 on any violation, 2 on bad flags.
import { loadEnvConfig } from '../src/config.js';
import { resolveDatabase } from '../src/db/resolveDatabase.js';
import { runScript } from '../src/cli/runScript.js';
import { CERTIFY_USAGE, parseCertifyFlags } from './options.js';
import { renderReport } from './report.js';
import { runCertification } from './run.js';

async function main(argv: string[]): Promise<number> {
  const { options, json, help } = parseCertifyFlags(argv);
  if (help) {
    console.log(CERTIFY_USAGE);
    return 0;
  }
  // With --faults the run starts a cluster of its own instead.
  const db = options.faults
    ? { connectionString: '', close: async () => undefined }
    : await resolveDatabase(loadEnvConfig());
  const interrupt = new AbortController();
  process.once('SIGINT', () => interrupt.abort());
  process.once('SIGTERM', () => interrupt.abort());
  try {
    const report = await runCertification(options, db.connectionString, (l) => console.error(`[certify] ${l}`), interrupt.signal);
    console.log(json ? JSON.stringify(report, null, 2) : renderReport(report));
    return report.violations.length === 0 ? 0 : 1;
  } finally {
    await db.close();
  }
}

runScript('certify', CERTIFY_USAGE, main);
