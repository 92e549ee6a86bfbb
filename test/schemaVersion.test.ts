import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../src/db/schemaVersion.js';
import { findSqlDir } from '../src/db/sqlFiles.js';

describe('schema version', () => {
  it('matches the newest numbered file in sql/', () => {
    const newest = Math.max(...readdirSync(findSqlDir()).filter((f) => /^\d{3}_/.test(f)).map((f) => Number(f.slice(0, 3))));
    expect(SCHEMA_VERSION).toBe(newest);
  });
});
