import assert from 'node:assert/strict';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';

/** The WCAG 2.1 A and AA rules of axe-core. */
const WCAG_21_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * Runs axe-core on the page as it is now and fails on any serious or critical violation, naming each rule and the
 * elements involved. Returns how many rules passed (so a caller can see axe did look) and the lesser violations.
 */
export async function expectNoSeriousAxeViolations(
  page: Page,
  state: string,
): Promise<{ passes: number; minor: string[] }> {
  const results = await new AxeBuilder({ page }).withTags(WCAG_21_AA).analyze();
  const serious = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      rule: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => `${JSON.stringify(n.target)}: ${n.failureSummary?.replace(/\s+/g, ' ')}`),
    }));
  assert.deepEqual(serious, [], `axe (${state}): ${JSON.stringify(serious, null, 2)}`);
  assert.ok(results.passes.length > 0, `axe (${state}) checked nothing`);
  return {
    passes: results.passes.length,
    minor: results.violations.map((v) => `${v.id} (${v.impact})`),
  };
}
