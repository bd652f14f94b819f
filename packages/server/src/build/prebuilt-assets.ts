import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The browser assets `npm run build` writes next to the server bundle (dist/assets/). */
export type PrebuiltAsset = 'widget.js' | 'portal.js' | 'portal.css';

let assetsDir: string | undefined;

/**
 * Called once by the production entry (built-entry.ts → dist/parley.mjs): from then on `/widget.js` and the
 * portal's assets are served from these files instead of being bundled by esbuild on first request.
 */
export function usePrebuiltAssets(dir: string): void {
  assetsDir = dir;
}

/**
 * A prebuilt asset's text; undefined when running from sources (the caller bundles it on the fly). A production
 * build without it is broken, and says so rather than silently needing esbuild and the sources at run time.
 */
export function prebuiltAsset(name: PrebuiltAsset): string | undefined {
  if (assetsDir === undefined) return undefined;
  try {
    return readFileSync(join(assetsDir, name), 'utf8');
  } catch (err) {
    throw new Error(`the production build has no ${name} in ${assetsDir}: run \`npm run build\``, {
      cause: err,
    });
  }
}
