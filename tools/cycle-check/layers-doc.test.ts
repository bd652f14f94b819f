import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readLayersFile } from './layers.ts';

const root = join(import.meta.dirname, '..', '..');

/** The tables of docs/architecture.md "Layers": per scope root, its rows as `tier layer: folder, folder`. */
function drawnTables(): Map<string, string[]> {
  const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const section = text.slice(
    text.indexOf('\n## Layers\n'),
    text.indexOf('\n## ', text.indexOf('\n## Layers\n') + 1),
  );
  const tables = new Map<string, string[]>();
  let rows: string[] | undefined;
  for (const line of section.split('\n')) {
    const cells = line.startsWith('|')
      ? line
          .split('|')
          .slice(1, -1)
          .map((cell) => cell.trim())
      : undefined;
    const scope = cells?.[2].match(/^folders of `([^`]+)`$/)?.[1];
    if (scope !== undefined) {
      rows = [];
      tables.set(scope, rows);
    } else if (cells === undefined) {
      rows = undefined;
    } else if (rows !== undefined && /^\d+$/.test(cells[0])) {
      const folders = [...cells[2].matchAll(/`([^`]+)`/g)].map((found) => found[1]);
      rows.push(`${cells[0]} ${cells[1]}: ${folders.join(', ')}`);
    }
  }
  return tables;
}

test('docs/architecture.md "Layers" draws the tiers, layers and folders of docs/layers.json', () => {
  const drawn = drawnTables();
  const file = readLayersFile(join(root, 'docs/layers.json'));
  assert.deepEqual([...drawn.keys()].sort(), file.scopes.map((scope) => scope.root).sort());
  for (const scope of file.scopes) {
    const rows = scope.tiers.flatMap((tier, index) =>
      tier.map((layer) => `${index + 1} ${layer.name}: ${layer.folders.join(', ')}`),
    );
    assert.deepEqual(drawn.get(scope.root), rows, `the table of ${scope.root}`);
  }
});
