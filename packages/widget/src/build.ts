import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';
import { chatCss } from './chat-styles.ts';
import { launcherCss } from './launcher-styles.ts';

/** The widget's browser assets: what `/widget.js` and `/widget/{name}` serve. */
export interface WidgetAssets {
  /** `/widget.js`: the launcher, a classic script (IIFE) that names the other two by their hashed names. */
  launcher: string;
  /** `/widget/chat.<hash>.js`: the chat, an ES module the launcher imports when it is needed. */
  chat: { name: string; code: string };
  /** `/widget/widget.<hash>.css`: every rule, for browsers without constructable stylesheets (stylesheets.ts). */
  css: { name: string; code: string };
}

/** The file name of a widget asset: its kind and a hash of its content, so it can be cached for a year. */
export function assetName(kind: 'chat' | 'widget', extension: 'js' | 'css', content: string): string {
  return `${kind}.${createHash('sha256').update(content).digest('base64url').slice(0, 16)}.${extension}`;
}

/**
 * Bundles the widget with esbuild's JS API: the chat first (the SDK, centrifuge, markdown and the views, as one ES
 * module), then the launcher, which gets the chat's and the stylesheet's hashed names. The server bundles them on
 * the first request and keeps them in memory (nothing written), or `npm run build` writes them (dist/assets/).
 */
export async function buildWidgetAssets(options: { minify?: boolean } = {}): Promise<WidgetAssets> {
  const { build } = await import('esbuild');
  const common: BuildOptions = {
    bundle: true,
    write: false,
    platform: 'browser',
    target: ['es2020'],
    minify: options.minify ?? true,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
  };
  const chatResult = await build({
    ...common,
    entryPoints: [fileURLToPath(new URL('./chat.ts', import.meta.url))],
    format: 'esm',
  });
  const chatCode = onlyOutput(chatResult.outputFiles);
  const cssCode = `${launcherCss}\n${chatCss}`;
  const chat = { name: assetName('chat', 'js', chatCode), code: chatCode };
  const css = { name: assetName('widget', 'css', cssCode), code: cssCode };
  const launcherResult = await build({
    ...common,
    entryPoints: [fileURLToPath(new URL('./browser-entry.ts', import.meta.url))],
    format: 'iife',
    define: {
      __PARLEY_CHAT_ASSET__: JSON.stringify(chat.name),
      __PARLEY_CSS_ASSET__: JSON.stringify(css.name),
    },
  });
  return { launcher: onlyOutput(launcherResult.outputFiles), chat, css };
}

function onlyOutput(files: { text: string }[] | undefined): string {
  const file = files?.[0];
  if (!file) throw new Error('esbuild produced no output');
  return file.text;
}
