import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The `name` of the repository's root package.json: the folder that holds it is the installation root. */
const ROOT_PACKAGE_NAME = 'parley';

/**
 * Where the data folder is: `PARLEY_DATA_DIR` when it is absolute; otherwise (unset: `data`) relative to the
 * installation root — the folder of the root package.json, above this module in the sources and above
 * `dist/parley.mjs` in the build — never to the working directory. So `npx parley …` run from any folder, `npm start`
 * and the server all find the one data folder (docs/config.md "The data folder"). Undefined when the root cannot be
 * found (a copied bundle without its package.json) and the setting is not absolute: loadConfig then refuses.
 */
export function resolveDataDir(configured: string | undefined, root: string | undefined): string | undefined {
  const path = configured ?? 'data';
  if (isAbsolute(path)) return path;
  return root === undefined ? undefined : resolve(root, path);
}

let cachedRoot: { root: string | undefined } | undefined;

/** The nearest folder above this module whose package.json is the repository's root package (looked up once). */
export function installationRoot(): string | undefined {
  cachedRoot ??= { root: findRoot(dirname(fileURLToPath(import.meta.url))) };
  return cachedRoot.root;
}

function findRoot(start: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && readName(manifest) === ROOT_PACKAGE_NAME) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

function readName(manifest: string): unknown {
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name;
  } catch {
    return undefined;
  }
}
