// The suite's global setup: every test file reads the server's URL with
// inject('databaseUrl') (see provideDatabase.ts).
import type { TestProject } from 'vitest/node';
import { provideDatabase } from './provideDatabase.js';

export default (project: TestProject) => provideDatabase(project, { dataDir: '.workhorse/test-pg' });
