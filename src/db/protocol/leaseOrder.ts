// The order a batch takes its leases in: ascending job id, the order a
// cancel of a job tree takes them (cancel_v1 locks parents first, and a
// parent's id is below its children's). A batch settlement locks its leases
// in the order it lists them (a nested loop over the arrays), so a batch
// listing a child before its parent, against a cancel of that tree, was a
// deadlock PostgreSQL broke by aborting one of them. Sorting here, not in
// SQL: an ORDER BY in the statement made the planner walk the whole lease
// table in key order instead (enable_sort is off there), and a sort of the
// arrays in PL/pgSQL costs about 0.5 us per job; a batch arrives almost
// always in claim order already, which this checks in one pass.

/** `items` in ascending job id order (the same array when it already is). */
export function inLeaseOrder<T extends { id: string }>(items: T[]): T[] {
  for (let i = 1; i < items.length; i++) {
    if (compareIds(items[i - 1]!.id, items[i]!.id) > 0) return [...items].sort((a, b) => compareIds(a.id, b.id));
  }
  return items;
}

/** Compares two job ids written in decimal (no leading zeros), as numbers. */
function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
