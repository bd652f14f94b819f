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
  const errors: string[] = [];
  const notes: string[] = [];
  const read = readImports(options.root);
  for (const found of read.unresolved) errors.push(`${PREFIX} ${found} names no file`);
  for (const found of read.inlineTypesOnly) {
    errors.push(`${PREFIX} ${found}: every name imported is a type: use \`import type\``);
  }

  const loops = findFolderLoops(read.imports);
  let violations: LayerViolation[];
  try {
    violations = findLayerViolations(
      readLayersFile(join(options.root, options.layers)),
      read.files,
      read.imports,
    );
  } catch (error) {
    if (!(error instanceof LayersFileError)) throw error;
    const problems = error.problems.map((problem) => `  ${problem}`);
    return {
      errors: [...errors, `${PREFIX} ${options.layers} does not fit the tree:`, ...problems],
      notes,
      failed: true,
    };
  }

  const loopEntries = new Set(
    loops.flatMap((loop) => loop.arrows.flatMap((arrow) => arrow.imports.map(entry))),
  );
  const layerEntries = new Set(violations.map((violation) => entry(violation.import)));
  const baselinePath = options.baseline === undefined ? undefined : join(options.root, options.baseline);
  const baseline: Baseline = baselinePath === undefined ? EMPTY_BASELINE : readBaseline(baselinePath);
  const loopDiff = compare(loopEntries, baseline.loops);
  const layerDiff = compare(layerEntries, baseline.layers);
  const isNew = {
    loops: (found: SourceImport) => loopDiff.added.has(entry(found)),
    layers: (found: SourceImport) => layerDiff.added.has(entry(found)),
  };

  if (options.updateBaseline) {
    if (baselinePath === undefined) throw new Error('--update-baseline needs --baseline <file>');
    const refused = (loopDiff.added.size > 0 || layerDiff.added.size > 0) && !options.acceptNew;
    if (!refused) {
      writeBaseline(baselinePath, { loops: [...loopEntries], layers: [...layerEntries] });
      notes.push(
        `${PREFIX} wrote ${options.baseline}: ${loopEntries.size} imports in folder loops, ${layerEntries.size} ` +
          `breaking the layers (${loopDiff.gone.length + layerDiff.gone.length} removed, ` +
          `${loopDiff.added.size + layerDiff.added.size} added)`,
      );
      return { errors, notes, failed: errors.length > 0 };
    }
    errors.push(
      `${PREFIX} not writing ${options.baseline}: the baseline may only shrink, and these are new ` +
        '(fix them, or add --accept-new after review):',
    );
  }

  const newLoops = loops.filter((loop) => loop.arrows.some((arrow) => arrow.imports.some(isNew.loops)));
  for (const loop of newLoops) errors.push(...describeLoop(loop, isNew.loops));
  const newViolations = violations.filter((violation) => isNew.layers(violation.import));
  if (newViolations.length > 0) {
    errors.push(`${PREFIX} ${newViolations.length} import(s) break the layers of ${options.layers}:`);
    errors.push(...newViolations.map(describeViolation));
  }
  const gone = [...loopDiff.gone.map((e) => `loops: ${e}`), ...layerDiff.gone.map((e) => `layers: ${e}`)];
  if (gone.length > 0) {
    errors.push(
      `${PREFIX} ${gone.length} import(s) of ${options.baseline} no longer break a rule: remove them ` +
        '(npm run check:cycles -- --update-baseline):',
      ...gone.map((line) => `  ${line}`),
    );
  }

  const knownLoops = loops.filter((loop) => !newLoops.includes(loop));
  const knownViolations = violations.filter((violation) => !isNew.layers(violation.import));
  if (options.all) {
    for (const loop of knownLoops) notes.push(...describeLoop(loop, () => true));
    if (knownViolations.length > 0) {
      notes.push(
        `${PREFIX} ${knownViolations.length} import(s) break the layers of ${options.layers} (known):`,
      );
      notes.push(...knownViolations.map(describeViolation));
    }
  }
  const known =
    baseline.loops.length + baseline.layers.length === 0
      ? ''
      : ` beyond those known in ${options.baseline} (${knownLoops.length} folder loop(s) of ` +
        `${loopEntries.size - loopDiff.added.size} imports, ${layerEntries.size - layerDiff.added.size} imports ` +
        'breaking the layers)';
  const failed = errors.length > 0;
  if (!failed) {
    notes.push(
      `${PREFIX} no folder loop and no import breaking ${options.layers}${known}; ` +
        `${read.files.length} files, ${read.imports.length} imports read`,
    );
  }
  return { errors, notes, failed };
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
