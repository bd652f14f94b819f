import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Bundles the SDK for browsers with esbuild: an ES module (`format: 'esm'`) for `<script type="module">` and
 * bundlers that do not read TypeScript, or an IIFE exposing `window.ParleyWebchat`.
 */
export async function buildSdkBundle(format: 'esm' | 'iife' = 'esm', minify = true): Promise<string> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./index.ts', import.meta.url))],
    bundle: true,
    write: false,
    format,
    globalName: format === 'iife' ? 'ParleyWebchat' : undefined,
    platform: 'browser',
    target: ['es2020'],
    minify,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error('esbuild produced no output');
  return file.text;
}

// `npm run build -w @parley/webchat-sdk` writes dist/ (git-ignored) for integrators who want a file.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { mkdirSync } = await import('node:fs');
  const dist = fileURLToPath(new URL('../dist/', import.meta.url));
  mkdirSync(dist, { recursive: true });
  writeFileSync(`${dist}parley-webchat.mjs`, await buildSdkBundle('esm'));
  writeFileSync(`${dist}parley-webchat.iife.js`, await buildSdkBundle('iife'));
  console.log(`wrote ${dist}parley-webchat.mjs and parley-webchat.iife.js`);
}
