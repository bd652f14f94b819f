import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { familiesOf } from './testing/exposition.ts';

const DASHBOARD = new URL('../../../../docs/grafana/parley-dashboard.json', import.meta.url);
const TOKEN = 'dashboard-test-token-0123456789';

interface Panel {
  title: string;
  targets?: Array<{ expr?: string }>;
}

/** The metric families a query names: histogram series (`_bucket`, `_sum`, `_count`) count as their family. */
function familiesNamedBy(expr: string, exported: Set<string>): string[] {
  return [...expr.matchAll(/\b(parley_[a-z0-9_]+)\b/g)].map(([, name]) => {
    const base = name!.replace(/_(bucket|sum|count)$/, '');
    return exported.has(name!) ? name! : base;
  });
}

describe('docs/grafana/parley-dashboard.json', () => {
  let server: TestServer;
  let exported: Set<string>;
  before(async () => {
    server = await startTestServer({ config: { metrics: { token: TOKEN } } });
    const res = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    exported = familiesOf(await res.text());
  });
  after(() => server.close());

  it('queries only metrics the server exports, in every panel', () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
    assert.ok(dashboard.panels.length > 0);
    const named = new Set<string>();
    for (const panel of dashboard.panels) {
      assert.ok(panel.targets && panel.targets.length > 0, `panel "${panel.title}" has no query`);
      for (const { expr } of panel.targets) {
        assert.ok(expr, `panel "${panel.title}" has an empty query`);
        const families = familiesNamedBy(expr, exported);
        assert.ok(families.length > 0, `"${expr}" names no parley_ metric`);
        for (const family of families) named.add(family);
      }
    }
    assert.deepEqual(
      [...named].filter((family) => !exported.has(family)),
      [],
      'metrics the dashboard queries but the server does not export',
    );
    // The contract's two named metrics are on the dashboard (docs/design.md "Operations").
    assert.ok(named.has('parley_http_requests_total') && named.has('parley_realtime_clients'));
  });
});
