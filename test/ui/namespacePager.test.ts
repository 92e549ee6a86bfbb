// The Namespace view's pager: the links to older pages and the range of ids
// a short window searched, which must name ids exactly however large they
// are (ids are bigint; above 2^53 a JavaScript number rounds them).
import { describe, expect, it } from 'vitest';
import type { NamespaceData } from '../../src/http/ui/data/namespaceData.js';
import { namespaceView } from '../../src/http/ui/views/namespaceView.js';

function live(before: string | undefined, searchedDownTo: string, nextBeforeId: string): string {
  const d: NamespaceData = {
    filter: { before },
    page: { jobs: [], nextBeforeId, searchedDownTo, asOf: new Date('2025-01-01T00:00:00Z') },
    queues: [],
    types: [],
  };
  return namespaceView(d).live.text;
}

describe('the Namespace pager', () => {
  it.each([
    ['9007199254740995', '9007199254730995', '9007199254740994'],
    ['9223372036854775807', '9223372036854765807', '9223372036854775806'],
  ])('names the top of the searched range below before=%s exactly', (before, floor, top) => {
    const text = live(before, floor, '42');
    expect(text).toContain(`Searched jobs #${floor}–#${top}; older jobs were not searched yet.`);
    expect(text).toContain('href="/ui?before=42"');
  });

  it('says "and newer" on the first page', () => {
    expect(live(undefined, '90001', '90001')).toContain('Searched jobs #90001 and newer;');
  });
});
