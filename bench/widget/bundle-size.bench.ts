// The widget's weight in the browser, gzipped (level 9) as a CDN would serve it, beside the published figures of
// the widgets it is measured against (docs/design.md "Widget"): what every page loads (the launcher, /widget.js),
// and what a visitor who opens the chat loads in all (launcher + chat module; the styles travel inside them as
// constructable stylesheets, the separate stylesheet is only for browsers without those).
import { gzipSync } from 'node:zlib';
import { buildWidgetAssets } from '../../packages/widget/src/build.ts';

const gz = (text: string) => gzipSync(text, { level: 9 }).length;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

const assets = await buildWidgetAssets();
const launcher = gz(assets.launcher);
const chat = gz(assets.chat.code);
const css = gz(assets.css.code);
const rows: Array<[string, string, string]> = [
  [
    'Parley launcher (/widget.js), every page',
    kb(launcher),
    `${assets.launcher.length} B raw; budget 15 KiB`,
  ],
  ['Parley chat module, loaded on open', kb(chat), `${assets.chat.code.length} B raw`],
  ['Parley full (launcher + chat)', kb(launcher + chat), 'what a visitor who chats loads'],
  ['Parley stylesheet (old browsers only)', kb(css), `${assets.css.code.length} B raw`],
  ['Crisp (published)', '~130 KB', '90 KB JS + 35–45 KB CSS'],
  ['Chatwoot (published)', '~170 KiB', 'chatwoot#2658'],
  ['Intercom (published)', '~210 KB', '~600 KB cut by 65 % (Intercom engineering blog)'],
];
const width = Math.max(...rows.map((r) => r[0].length));
console.log('gzipped sizes');
for (const [name, size, note] of rows) console.log(`${name.padEnd(width)}  ${size.padStart(9)}  ${note}`);
if (launcher > 15 * 1024) {
  console.error(`the launcher is over its 15 KiB budget: ${kb(launcher)}`);
  process.exit(1);
}
