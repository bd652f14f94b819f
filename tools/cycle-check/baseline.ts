// The known-violations baseline: the imports that made a folder loop or broke the layers when the check was
// introduced, listed so the check can hold the tree to "no new ones" while they are removed. It may only shrink: an
// import not listed fails the check, and so does a listed one that no longer breaks anything (the list stays
// exact, so each removal is visible in review). One entry is one pair of files, `from -> to`: another import
// statement between the same two files is the same entry, a new pair is new even inside a known loop.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export interface Baseline {
  /** Imports that are an arrow of a folder loop. */
  loops: string[];
  /** Imports that break docs/layers.json. */
  layers: string[];
}

export const EMPTY_BASELINE: Baseline = { loops: [], layers: [] };

export function entryOf(from: string, to: string): string {
  return `${from} -> ${to}`;
}

export function readBaseline(path: string): Baseline {
  if (!existsSync(path)) return EMPTY_BASELINE;
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<Baseline>;
  const list = (value: unknown, name: string): string[] => {
    if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'string')) {
      throw new Error(`${path}: "${name}" must be a list of "from -> to" strings`);
    }
    return value;
  };
  return { loops: list(parsed.loops ?? [], 'loops'), layers: list(parsed.layers ?? [], 'layers') };
}

export function writeBaseline(path: string, baseline: Baseline): void {
  const sorted = { loops: [...new Set(baseline.loops)].sort(), layers: [...new Set(baseline.layers)].sort() };
  const text = JSON.stringify(
    {
      $comment:
        'Known folder loops and layer violations (docs/architecture.md "Layers"). This list may only shrink: ' +
        'npm run check:cycles fails on an import that is not listed and on a listed one that is gone. After ' +
        'removing violations, rewrite it with: npm run check:cycles -- --update-baseline',
      ...sorted,
    },
    null,
    2,
  );
  writeFileSync(path, `${text}\n`);
}

/** What is listed but no longer found, and what is found but not listed. */
export function compare(found: Set<string>, listed: string[]): { added: Set<string>; gone: string[] } {
  const known = new Set(listed);
  return {
    added: new Set([...found].filter((entry) => !known.has(entry))),
    gone: [...known].filter((entry) => !found.has(entry)).sort(),
  };
}
