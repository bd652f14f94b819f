// The layers file (docs/layers.json, drawn in docs/architecture.md "Layers") and the imports that break it.
//
// A scope is one tree (`packages/server/src`) drawn as tiers from the top down; a tier holds one layer or several
// side by side, a layer is a list of folders and files of the scope. An import may stay inside its layer or go down
// to a lower tier; going up, or across to a layer beside its own, breaks the drawing, and so does an import that a
// `never` rule forbids, whatever the tiers say (nevers keep holding if the tiers are ever redrawn). Besides the
// scopes, two rules hold for the whole repository: nothing but a test imports a test file, and production code (the
// `production` folders, minus test support) never imports test support.
//
// Folder patterns are paths, relative to the scope for layers and to the repository for `testSupport` and
// `production`, where `*` stands for one name and `**` for any number of folders. A pattern names a folder with
// everything under it, or one file; a file belongs to the layer whose pattern names the deepest part of its path
// (in `packages/server/src`, `**/testing` holds `packages/server/src/metrics/testing/exposition.ts` although
// `metrics` holds the rest of `packages/server/src/metrics`).
import { readFileSync } from 'node:fs';
import { isTestFile, type SourceImport } from './imports.ts';

export interface Layer {
  name: string;
  folders: string[];
}

export interface Never {
  /** Layer names, or `*`: every layer of the scope not named on the other side. */
  from: string[];
  to: string[];
  why: string;
}

export interface Scope {
  root: string;
  tiers: Layer[][];
  never?: Never[];
}

export interface LayersFile {
  testSupport: string[];
  production: string[];
  scopes: Scope[];
}

export interface LayerViolation {
  import: SourceImport;
  /** Why it breaks the drawing, in words: `runs up from Access to Root`, `Base never imports Edge: …`. */
  reason: string;
}

export class LayersFileError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

export function readLayersFile(path: string): LayersFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw new LayersFileError([code === 'ENOENT' ? 'there is no such file' : `cannot read it: ${message}`]);
  }
  const problems = shapeProblems(parsed);
  if (problems.length > 0) throw new LayersFileError(problems);
  return parsed as LayersFile;
}

/** The imports that break the layers file, in file and line order; throws when the file does not fit the tree. */
export function findLayerViolations(
  layers: LayersFile,
  files: string[],
  imports: SourceImport[],
): LayerViolation[] {
  const problems: string[] = [];
  const placed = layers.scopes.map((scope) => placeScope(scope, files, problems));
  if (problems.length > 0) throw new LayersFileError(problems);
  const isTestSupport = (file: string) => layers.testSupport.some((pattern) => match(pattern, file) >= 0);
  const isProduction = (file: string) =>
    !isTestFile(file) &&
    !isTestSupport(file) &&
    layers.production.some((pattern) => match(pattern, file) >= 0);

  const violations: LayerViolation[] = [];
  for (const found of imports) {
    if (isTestFile(found.from)) continue;
    if (isTestFile(found.to)) {
      violations.push({ import: found, reason: 'nothing but a test imports a test file' });
    } else if (isProduction(found.from) && isTestSupport(found.to)) {
      violations.push({ import: found, reason: 'production code never imports test support' });
    } else {
      for (const scope of placed) {
        const reason = scope.judge(found.from, found.to);
        if (reason !== undefined) violations.push({ import: found, reason });
      }
    }
  }
  return violations.sort(
    (a, b) => a.import.from.localeCompare(b.import.from) || a.import.line - b.import.line,
  );
}

interface PlacedScope {
  /** Why an import from one file to another breaks this scope's drawing; undefined when it does not. */
  judge(from: string, to: string): string | undefined;
}

function placeScope(scope: Scope, files: string[], problems: string[]): PlacedScope {
  const prefix = `${scope.root}/`;
  const layers = scope.tiers.flatMap((tier, level) => tier.map((layer) => ({ ...layer, level })));
  const used = new Set<string>();
  const layerOf = new Map<string, (typeof layers)[number]>();
  for (const file of files) {
    if (!file.startsWith(prefix) || isTestFile(file)) continue;
    const path = file.slice(prefix.length);
    let best: { layer: (typeof layers)[number]; depth: number; pattern: string } | undefined;
    for (const layer of layers) {
      for (const pattern of layer.folders) {
        const depth = match(pattern, path);
        if (depth < 0) continue;
        if (best !== undefined && depth === best.depth && best.layer !== layer) {
          problems.push(
            `${file} is in two layers: ${best.layer.name} (${best.pattern}) and ${layer.name} (${pattern})`,
          );
          used.add(`${layer.name}\0${pattern}`);
        }
        if (best === undefined || depth > best.depth) best = { layer, depth, pattern };
      }
    }
    if (best === undefined) {
      problems.push(`${file} is in no layer of ${scope.root}: add its folder to a layer`);
    } else {
      used.add(`${best.layer.name}\0${best.pattern}`);
      layerOf.set(file, best.layer);
    }
  }
  for (const layer of layers) {
    for (const pattern of layer.folders) {
      if (!used.has(`${layer.name}\0${pattern}`)) {
        problems.push(
          `layer ${layer.name} of ${scope.root} lists '${pattern}', which holds no file of its own`,
        );
      }
    }
  }
  const names = new Set(layers.map((layer) => layer.name));
  const nevers = (scope.never ?? []).map((rule) => {
    for (const name of [...rule.from, ...rule.to]) {
      if (name !== '*' && !names.has(name))
        problems.push(`a never rule of ${scope.root} names no layer: ${name}`);
    }
    const side = (list: string[], other: string[]) =>
      new Set(list.includes('*') ? [...names].filter((name) => !other.includes(name)) : list);
    return { from: side(rule.from, rule.to), to: side(rule.to, rule.from), why: rule.why };
  });
  return {
    judge(from, to) {
      const a = layerOf.get(from);
      const b = layerOf.get(to);
      if (a === undefined || b === undefined) return undefined;
      const never = nevers.find((rule) => rule.from.has(a.name) && rule.to.has(b.name));
      if (never !== undefined) return `${a.name} never imports ${b.name}: ${never.why}`;
      if (a === b) return undefined;
      if (b.level < a.level) return `runs up from ${a.name} to ${b.name}`;
      if (b.level === a.level) return `${a.name} and ${b.name} stand side by side`;
      return undefined;
    },
  };
}

// How many leading names of `path` the pattern names (the folder or file it stands for), or -1 when it names none
// of them. Of the path of `packages/server/src/metrics/testing/exposition.ts` inside `packages/server/src`,
// `metrics` names 1 name and `**/testing` 2.
export function match(pattern: string, path: string): number {
  const want = pattern.split('/');
  const have = path.split('/');
  const from = (p: number, q: number): number => {
    if (p === want.length) return q;
    if (want[p] === '**') {
      for (let skip = q; skip < have.length; skip += 1) {
        const depth = from(p + 1, skip);
        if (depth >= 0) return depth;
      }
      return -1;
    }
    if (q === have.length || (want[p] !== '*' && want[p] !== have[q])) return -1;
    return from(p + 1, q + 1);
  };
  return from(0, 0);
}

function shapeProblems(value: unknown): string[] {
  const problems: string[] = [];
  const isStrings = (list: unknown): list is string[] =>
    Array.isArray(list) && list.every((item) => typeof item === 'string' && item !== '');
  if (typeof value !== 'object' || value === null) return ['the layers file is not a JSON object'];
  const file = value as Record<string, unknown>;
  if (!isStrings(file.testSupport)) problems.push('testSupport: a list of folder patterns');
  if (!isStrings(file.production)) problems.push('production: a list of folder patterns');
  if (!Array.isArray(file.scopes)) return [...problems, 'scopes: a list of scopes'];
  file.scopes.forEach((scope: Record<string, unknown>, index: number) => {
    const at = `scopes[${index}]`;
    if (typeof scope?.root !== 'string') problems.push(`${at}.root: the folder the scope draws`);
    const tiers = scope?.tiers;
    const layerShape = (layer: Record<string, unknown>) =>
      typeof layer?.name === 'string' && isStrings(layer.folders) && layer.folders.length > 0;
    if (
      !Array.isArray(tiers) ||
      !tiers.every((tier) => Array.isArray(tier) && tier.length > 0 && tier.every(layerShape))
    ) {
      problems.push(`${at}.tiers: a list of tiers, top first, each a list of { "name", "folders": [...] }`);
    } else {
      const names = tiers.flat().map((layer: Layer) => layer.name);
      const twice = names.filter((name, i) => names.indexOf(name) !== i);
      if (twice.length > 0) problems.push(`${at}: layer names used twice: ${twice.join(', ')}`);
    }
    const nevers = scope?.never ?? [];
    const neverShape = (rule: Record<string, unknown>) =>
      isStrings(rule?.from) && isStrings(rule?.to) && typeof rule?.why === 'string' && rule.why !== '';
    if (!Array.isArray(nevers) || !nevers.every(neverShape)) {
      problems.push(`${at}.never: a list of { "from": [layers], "to": [layers], "why": "…" }`);
    }
  });
  return problems;
}
