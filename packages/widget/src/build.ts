import { fileURLToPath } from 'node:url';

/**
 * Bundles the widget (with the SDK and centrifuge) into one browser script with esbuild's JS API. The server's
 * `/widget.js` route calls this once and keeps the result in memory; nothing is committed or written to disk.
 */
export async function buildWidgetBundle(options: { minify?: boolean } = {}): Promise<string> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./browser-entry.ts', import.meta.url))],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: ['es2020'],
    minify: options.minify ?? true,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error('esbuild produced no output');
  return file.text;
}
