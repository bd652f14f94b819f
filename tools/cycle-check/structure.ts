// The structure half of `npm run check:cycles`: folder loops (folder-loops.ts) and the layers file (layers.ts) over
// every import of the repository's sources (imports.ts), held against the known-violations baseline (baseline.ts).
// It returns what to print instead of printing, so its tests can read the exact words.
import { join, relative } from 'node:path';
import { type Baseline, compare, EMPTY_BASELINE, entryOf, readBaseline, writeBaseline } from './baseline.ts';
import { type FolderLoop, findFolderLoops } from './folder-loops.ts';
import { readImports, type SourceImport } from './imports.ts';
import { findLayerViolations, LayersFileError, type LayerViolation, readLayersFile } from './layers.ts';

export interface StructureOptions {
  /** The repository. */
  root: string;
  /** The layers file, relative to the repository. */
  layers: string;
  /** The known-violations baseline, relative to the repository; without it every violation fails. */
  baseline?: string;
  /** Rewrite the baseline to what is found today; refused while something new is found, unless `acceptNew`. */
  updateBaseline?: boolean;
  acceptNew?: boolean;
  /** Print the violations the baseline knows too (by default only their count). */
  all?: boolean;
}

export interface StructureReport {
  /** Lines for stderr: each reason the check fails. */
  errors: string[];
  /** Lines for stdout: the summary, and with `all` the known violations. */
  notes: string[];
  failed: boolean;
}

const PREFIX = 'check:cycles:';

export function checkStructure(options: StructureOptions): StructureReport {
  const tree = readTree(options);
  const baseline =
    options.baseline === undefined ? EMPTY_BASELINE : readBaseline(join(options.root, options.baseline));
  const found = holdAgainst(tree, baseline);
  return options.updateBaseline
    ? rewriteBaseline(options, tree, found)
    : report(options, tree, baseline, found);
}

interface Tree {
  files: string[];
  imports: SourceImport[];
  loops: FolderLoop[];
  /** Undefined when the layers file does not fit the tree (then `errors` says why). */
  violations: LayerViolation[] | undefined;
  /** What fails whatever the baseline lists: unresolved imports, inline type imports, a layers file that is wrong. */
  errors: string[];
}

function readTree(options: StructureOptions): Tree {
  const { files, imports, unresolved, inlineTypesOnly } = readImports(options.root);
  const errors = [
    ...unresolved.map((found) => `${PREFIX} ${found} names no file`),
    ...inlineTypesOnly.map(
      (found) => `${PREFIX} ${found}: every name imported is a type: use \`import type\``,
    ),
  ];
  let violations: LayerViolation[] | undefined;
  try {
    violations = findLayerViolations(readLayersFile(join(options.root, options.layers)), files, imports);
  } catch (error) {
    if (!(error instanceof LayersFileError)) throw error;
    errors.push(`${PREFIX} ${options.layers} does not fit the tree:`);
    errors.push(...error.problems.map((problem) => `  ${problem}`));
  }
  return { files, imports, loops: findFolderLoops(imports), violations, errors };
}

interface Findings {
  /** Baseline entries found today. */
  loopEntries: Set<string>;
  layerEntries: Set<string>;
  /** Found but not listed. */
  added: Set<string>;
  /** Listed but not found; layer entries count as found while the layers file cannot be read. */
  gone: string[];
  isNew(found: SourceImport, list: 'loops' | 'layers'): boolean;
}

function holdAgainst(tree: Tree, baseline: Baseline): Findings {
  const loopEntries = new Set(
    tree.loops.flatMap((loop) => loop.arrows.flatMap((arrow) => arrow.imports.map(entry))),
  );
  const layerEntries = new Set((tree.violations ?? []).map((violation) => entry(violation.import)));
  const loops = compare(loopEntries, baseline.loops);
  const layers = compare(
    tree.violations === undefined ? new Set(baseline.layers) : layerEntries,
    baseline.layers,
  );
  return {
    loopEntries,
    layerEntries,
    added: new Set([...loops.added, ...layers.added]),
    gone: [...loops.gone.map((e) => `loops: ${e}`), ...layers.gone.map((e) => `layers: ${e}`)],
    isNew: (found, list) => (list === 'loops' ? loops : layers).added.has(entry(found)),
  };
}

/** `--update-baseline`: today's violations become the list, as long as nothing is new (or `--accept-new`). */
function rewriteBaseline(options: StructureOptions, tree: Tree, found: Findings): StructureReport {
  const errors = [...tree.errors];
  if (options.baseline === undefined) {
    return {
      errors: [...errors, `${PREFIX} --update-baseline needs --baseline FILE`],
      notes: [],
      failed: true,
    };
  }
  if (tree.violations === undefined) {
    errors.push(`${PREFIX} not writing ${options.baseline} while ${options.layers} does not fit the tree`);
    return { errors, notes: [], failed: true };
  }
  if (found.added.size > 0 && !options.acceptNew) {
    errors.push(
      `${PREFIX} not writing ${options.baseline}: the baseline may only shrink, and these are new ` +
        '(fix them, or add --accept-new after review):',
      ...newViolations(options, tree, found),
    );
    return { errors, notes: [], failed: true };
  }
  writeBaseline(join(options.root, options.baseline), {
    loops: [...found.loopEntries],
    layers: [...found.layerEntries],
  });
  const notes = [
    `${PREFIX} wrote ${options.baseline}: ${found.loopEntries.size} file-to-file imports in folder loops, ` +
      `${found.layerEntries.size} breaking the layers (${found.gone.length} removed, ${found.added.size} added)`,
  ];
  return { errors, notes, failed: errors.length > 0 };
}

function report(options: StructureOptions, tree: Tree, baseline: Baseline, found: Findings): StructureReport {
  const errors = [...tree.errors, ...newViolations(options, tree, found)];
  if (found.gone.length > 0) {
    errors.push(
      `${PREFIX} ${found.gone.length} import(s) of ${options.baseline} no longer break a rule: remove them ` +
        '(npm run check:cycles -- --update-baseline):',
      ...found.gone.map((line) => `  ${line}`),
    );
  }
  const knownLoops = tree.loops.filter((loop) => !hasNew(loop, found));
  const knownViolations = (tree.violations ?? []).filter(
    (violation) => !found.isNew(violation.import, 'layers'),
  );
  const notes: string[] = [];
  if (options.all) {
    for (const loop of knownLoops) notes.push(...describeLoop(loop, () => true));
    if (knownViolations.length > 0) {
      notes.push(
        `${PREFIX} ${knownViolations.length} import(s) break the layers of ${options.layers} (known):`,
      );
      notes.push(...knownViolations.map(describeViolation));
    }
  }
  const failed = errors.length > 0;
  if (!failed) {
    const known =
      baseline.loops.length + baseline.layers.length === 0
        ? ''
        : ` beyond those known in ${options.baseline} (${knownLoops.length} folder loop(s) of ` +
          `${found.loopEntries.size} file-to-file imports, ${found.layerEntries.size} breaking the layers)`;
    notes.push(
      `${PREFIX} no folder loop and no import breaking ${options.layers}${known}; ` +
        `${tree.files.length} files, ${tree.imports.length} imports read`,
    );
  }
  return { errors, notes, failed };
}

/** The loops with an import the baseline does not list (only those imports shown), then the new layer violations. */
function newViolations(options: StructureOptions, tree: Tree, found: Findings): string[] {
  const lines: string[] = [];
  const isNewInLoop = (one: SourceImport) => found.isNew(one, 'loops');
  for (const loop of tree.loops.filter((loop) => hasNew(loop, found)))
    lines.push(...describeLoop(loop, isNewInLoop));
  const violations = (tree.violations ?? []).filter((violation) => found.isNew(violation.import, 'layers'));
  if (violations.length > 0) {
    lines.push(`${PREFIX} ${violations.length} import(s) break the layers of ${options.layers}:`);
    lines.push(...violations.map(describeViolation));
  }
  return lines;
}

function hasNew(loop: FolderLoop, found: Findings): boolean {
  return loop.arrows.some((arrow) => arrow.imports.some((one) => found.isNew(one, 'loops')));
}

function entry(found: SourceImport): string {
  return entryOf(found.from, found.to);
}

/** A loop: its folder and entries, one shortest way round, then each arrow with the imports that make it. */
export function describeLoop(loop: FolderLoop, show: (found: SourceImport) => boolean): string[] {
  const inside = (file: string) => (loop.folder === '.' ? file : relative(loop.folder, file));
  const lines = [
    `${PREFIX} folder loop in ${loop.folder}, ${loop.entries.length} entries: ${loop.entries.join(', ')} ` +
      `(shortest: ${loop.shortest.join(' → ')})`,
  ];
  let hidden = 0;
  for (const arrow of loop.arrows) {
    const shown = arrow.imports.filter(show);
    hidden += arrow.imports.length - shown.length;
    if (shown.length === 0) continue;
    lines.push(`  ${arrow.from} → ${arrow.to}`);
    for (const found of shown) {
      lines.push(
        `    ${inside(found.from)}:${found.line} imports ${found.names.join(', ')} from ${inside(found.to)}`,
      );
    }
  }
  if (hidden > 0) lines.push(`  (and ${hidden} import(s) of this loop that the baseline knows)`);
  return lines;
}

export function describeViolation(violation: LayerViolation): string {
  const { from, line, names, to } = violation.import;
  return `  ${from}:${line} imports ${names.join(', ')} from ${to}: ${violation.reason}`;
}
