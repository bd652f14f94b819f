import assert from 'node:assert/strict';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';

/** The WCAG 2.1 A and AA rules of axe-core (best-practice rules, which are not success criteria, are left out). */
const WCAG_21_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * Runs axe-core on the whole page (the widget's open shadow root included) and fails with every violation, its
 * rule, impact and the elements involved. Returns how many rules passed, so a caller can see axe did look.
 */
export async function expectNoAxeViolations(page: Page, state: string): Promise<number> {
  const results = await new AxeBuilder({ page }).withTags(WCAG_21_AA).analyze();
  const found = results.violations.map((v) => ({
    rule: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => `${JSON.stringify(n.target)}: ${n.failureSummary?.replace(/\s+/g, ' ')}`),
  }));
  assert.deepEqual(found, [], `axe (${state}): ${JSON.stringify(found, null, 2)}`);
  return results.passes.length;
}
