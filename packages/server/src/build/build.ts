import { copyFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWidgetAssets } from '@parley/widget/build';
import { buildPortalBundle } from '../portal-api/spa.routes.ts';
import { type PrebuiltAsset, WIDGET_MANIFEST } from '../widget-assets/prebuilt-assets.ts';

const ENTRY = fileURLToPath(new URL('./built-entry.ts', import.meta.url));

/**
 * Files the bundle reads at run time, next to itself: the realtime engine loads its Protobuf schema from the
 * folder of its own module (packages/realtime/src/protocol/schema.ts), which in the bundle is the folder of
 * `parley.mjs`.
 */
const RUNTIME_FILES = [
  { name: 'client.proto', source: createRequire(import.meta.url).resolve('@parley/realtime/client.proto') },
];

/**
 * Packages loaded from node_modules at run time instead of being bundled: native addons (a `.node` binary found
 * next to their own files), packages that read files of their own package directory (swagger-ui's static pages),
 * esbuild (a binary, only used when assets are bundled on the fly — never by the built server), and pg's optional
 * native binding, which is not installed.
 */
export const EXTERNAL_PACKAGES = [
  'better-sqlite3',
  '@node-rs/argon2',
  '@fastify/swagger-ui',
  'esbuild',
  'pg-native',
];

/**
 * In an ES module bundle the CommonJS dependencies still call `require` and read `__filename`/`__dirname`: give
 * them Node's own, for the bundle file (the bundled dependencies read no files of their own; see EXTERNAL).
 */
const COMMONJS_SHIM = [
  "import { createRequire as __parleyCreateRequire } from 'node:module';",
  "import { fileURLToPath as __parleyFileURLToPath } from 'node:url';",
  "import { dirname as __parleyDirname } from 'node:path';",
  'const require = __parleyCreateRequire(import.meta.url);',
  'const __filename = __parleyFileURLToPath(import.meta.url);',
  'const __dirname = __parleyDirname(__filename);',
].join('\n');

export interface BuildResult {
  outDir: string;
  files: string[];
}

/**
 * `npm run build`: the server and its CLI as one ES module (`parley.mjs`, TypeScript compiled away, dependencies
 * bundled except EXTERNAL_PACKAGES) and the browser assets it serves (`assets/`). Written to a sibling folder and
 * swapped in at the end, so `outDir` never holds half a build; `build-info.json`, written last, marks it complete.
 */
export async function buildProduction(outDir: string): Promise<BuildResult> {
  const esbuild = await import('esbuild');
  const staging = `${outDir}.tmp-${process.pid}`;
  let widgetFiles: string[] = [];
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(join(staging, 'assets'), { recursive: true });
  try {
    await esbuild.build({
      entryPoints: [ENTRY],
      outfile: join(staging, 'parley.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20.19',
      external: EXTERNAL_PACKAGES,
      banner: { js: COMMONJS_SHIM },
      legalComments: 'none',
      logLevel: 'warning',
    });
    for (const file of RUNTIME_FILES) copyFileSync(file.source, join(staging, file.name));
    const portal = await buildPortalBundle();
    const assets: Record<PrebuiltAsset, string> = { 'portal.js': portal.js, 'portal.css': portal.css };
    for (const [name, text] of Object.entries(assets)) writeFileSync(join(staging, 'assets', name), text);
    widgetFiles = await writeWidget(join(staging, 'assets'));
    writeFileSync(
      join(staging, 'build-info.json'),
      `${JSON.stringify({ built_at: new Date().toISOString(), node: process.version }, null, 2)}\n`,
    );
    rmSync(outDir, { recursive: true, force: true });
    renameSync(staging, outDir);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  } finally {
    await esbuild.stop();
  }
  return {
    outDir,
    files: [
      'parley.mjs',
      ...RUNTIME_FILES.map((f) => f.name),
      'build-info.json',
      ...['portal.js', 'portal.css', ...widgetFiles].map((f) => `assets/${f}`),
    ],
  };
}

/** The widget's launcher, its chat module and stylesheet (hashed names), and the manifest naming them. */
async function writeWidget(assetsDir: string): Promise<string[]> {
  const widget = await buildWidgetAssets();
  mkdirSync(join(assetsDir, 'widget'));
  writeFileSync(join(assetsDir, 'widget.js'), widget.launcher);
  writeFileSync(join(assetsDir, 'widget', widget.chat.name), widget.chat.code);
  writeFileSync(join(assetsDir, 'widget', widget.css.name), widget.css.code);
  writeFileSync(
    join(assetsDir, WIDGET_MANIFEST),
    `${JSON.stringify({ chat: widget.chat.name, css: widget.css.name })}\n`,
  );
  return ['widget.js', WIDGET_MANIFEST, `widget/${widget.chat.name}`, `widget/${widget.css.name}`];
}
