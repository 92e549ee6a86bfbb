// Which of the protocol's functions the database does not have. The
// protocol files are re-applied when their checksum changes; a function
// dropped by hand (or by a restore that left some out) leaves the checksum
// as it was, so without this check `workhorse migrate` said the schema was
// up to date while every call of that function failed with 42883. The
// check compares names only (the function names the protocol files create
// against pg_proc in the workhorse schema): one query, no signature
// parsing. A function that exists under the right name with other
// argument types is not noticed; every protocol function has one
// signature, so a dropped function is.
import type { Queryable } from './queryable.js';

/** `create [or replace] function workhorse.<name>(` in a protocol file. */
const CREATES_FUNCTION = /create\s+(?:or\s+replace\s+)?function\s+workhorse\.([a-z0-9_]+)\s*\(/gi;

/** The names of the functions these SQL texts create in the workhorse schema, each once, in order of first appearance. */
export function protocolFunctionNames(sqlTexts: readonly string[]): string[] {
  const names = new Set<string>();
  for (const sql of sqlTexts) for (const m of sql.matchAll(CREATES_FUNCTION)) names.add(m[1]!.toLowerCase());
  return [...names];
}

/** The names among `expected` that no function of the workhorse schema has. */
export async function missingProtocolFunctions(db: Queryable, expected: readonly string[]): Promise<string[]> {
  if (expected.length === 0) return [];
  const r = await db.query<{ name: string }>(
    `select name from unnest($1::text[]) with ordinality as e(name, n)
      where not exists (select 1 from pg_proc p where p.pronamespace = 'workhorse'::regnamespace and p.proname = e.name)
      order by n`,
    [expected],
  );
  return r.rows.map((row) => row.name);
}
