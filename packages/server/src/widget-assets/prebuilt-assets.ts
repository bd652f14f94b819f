import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The browser assets `npm run build` writes next to the server bundle (dist/assets/). */
export type PrebuiltAsset = 'portal.js' | 'portal.css';

/** The widget's files in dist/assets/: `widget.js`, `widget.json` naming the other two, and `widget/{name}`. */
export const WIDGET_MANIFEST = 'widget.json';

export interface PrebuiltWidget {
  launcher: string;
  chat: { name: string; code: string };
  css: { name: string; code: string };
}

let assetsDir: string | undefined;

/**
 * Called once by the production entry (built-entry.ts → dist/parley.mjs): from then on the widget's and the portal's
 * assets are served from these files instead of being bundled by esbuild on first request.
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
  return readAsset(assetsDir, name);
}

/** The production build's widget (launcher, chat module, stylesheet); undefined when running from sources. */
export function prebuiltWidget(): PrebuiltWidget | undefined {
  if (assetsDir === undefined) return undefined;
  const dir = assetsDir;
  const names = JSON.parse(readAsset(dir, WIDGET_MANIFEST)) as { chat: string; css: string };
  return {
    launcher: readAsset(dir, 'widget.js'),
    chat: { name: names.chat, code: readAsset(dir, `widget/${names.chat}`) },
    css: { name: names.css, code: readAsset(dir, `widget/${names.css}`) },
  };
}

function readAsset(dir: string, name: string): string {
  try {
    return readFileSync(join(dir, name), 'utf8');
  } catch (err) {
    throw new Error(`the production build has no ${name} in ${dir}: run \`npm run build\``, { cause: err });
  }
}
