// Whether dist/ (what `npm run build` writes) is complete and newer than everything it is built from. Plain
// JavaScript with no dependencies: `npm start` (scripts/start.mjs) and `npx parley` (packages/server/bin/parley.js)
// ask it before any compiler is loaded.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// This file stands in packages/server/bin/ (the `parley` entry reads it); the repository is three folders up.
export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const DIST = join(ROOT, 'dist');
/** The production entry: exports `runCli` (packages/server/src/build/built-entry.ts). */
export const BUILT_ENTRY = join(DIST, 'parley.mjs');
/** Written last by the build, so its presence means a complete build and its time is the build's. */
const BUILD_INFO = join(DIST, 'build-info.json');

/** Sources of the bundle: the workspace packages, the dependency set (lock files) and the build itself. */
const INPUT_FILES = [
  'package.json',
  'package-lock.json',
  'node_modules/.package-lock.json',
  'scripts/build.mjs',
];

export function buildIsCurrent() {
  if (!existsSync(BUILD_INFO) || !existsSync(BUILT_ENTRY)) return false;
  return newestInputMs() <= statSync(BUILD_INFO).mtimeMs;
}

/** Why a build is (re)made, for the one line `npm start` prints. */
export function buildState() {
  if (!existsSync(BUILD_INFO)) return 'missing';
  return buildIsCurrent() ? 'current' : 'older than the sources';
}

function newestInputMs() {
  let newest = 0;
  const consider = (path) => {
    const mtime = statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (mtime > newest) newest = mtime;
  };
  for (const file of INPUT_FILES) consider(join(ROOT, file));
  const packages = join(ROOT, 'packages');
  for (const name of readdirSync(packages)) {
    consider(join(packages, name, 'package.json'));
    walk(join(packages, name, 'src'), consider);
  }
  return newest;
}

/** Every file under `dir` except tests (they are not part of the build). */
function walk(dir, consider) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, consider);
    else if (!entry.name.includes('.test.')) consider(path);
  }
}
