// The plans PostgreSQL runs for a protocol call, including the statements
// inside its PL/pgSQL and SQL functions: auto_explain with nested
// statements, its output sent to this client as notices. Used to check that
// the dashboard's reads stay index-backed, and to write the plans out as an
// artifact (.workhorse/plans/) for people to read.
import pg from 'pg';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
  [key: string]: unknown;
}

export interface NestedPlan {
  query: string;
  plan: PlanNode;
}

const SETTINGS = [
  "load 'auto_explain'",
  'set auto_explain.log_min_duration = 0',
  'set auto_explain.log_nested_statements = on',
  'set auto_explain.log_level = notice',
  'set auto_explain.log_analyze = on',
  "set client_min_messages = 'notice'",
];

/** Runs `sql` once and returns each statement's plan (JSON), and the plans as text. */
export async function explainCall(url: string, sql: string, params: unknown[]): Promise<{ plans: NestedPlan[]; text: string; ms: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const notices: string[] = [];
  c.on('notice', (n) => notices.push(n.message ?? ''));
  try {
    for (const s of SETTINGS) await c.query(s);
    await c.query('set auto_explain.log_format = json');
    await c.query(sql, params);
    const plans = notices
      .filter((m) => m.includes('plan:'))
      .map((m) => JSON.parse(m.slice(m.indexOf('\n') + 1)) as { 'Query Text': string; Plan: PlanNode })
      .map((p) => ({ query: p['Query Text'], plan: p.Plan }));
    notices.length = 0;
    await c.query('set auto_explain.log_format = text');
    const started = performance.now();
    await c.query(sql, params);
    const ms = performance.now() - started;
    return { plans, text: notices.join('\n'), ms };
  } finally {
    await c.end();
  }
}

/** Every node of a plan tree. */
export function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

/** The sequential scans of the given tables anywhere in the plans. */
export function seqScansOf(plans: NestedPlan[], tables: string[]): string[] {
  return plans.flatMap((p) =>
    nodesOf(p.plan)
      .filter((n) => n['Node Type'] === 'Seq Scan' && tables.includes(n['Relation Name'] ?? ''))
      .map((n) => `${n['Relation Name']} in: ${p.query.replace(/\s+/g, ' ').slice(0, 120)}`),
  );
}
