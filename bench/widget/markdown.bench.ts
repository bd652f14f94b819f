// The widget's markdown parser (also the portal's and the inbox previews'): time to parse 1 KB to 64 KB of each
// pathological input (packages/widget/src/testing/pathological-inputs.ts) and of an ordinary long reply, for the
// linear parser and, in the same run, the previous scan-ahead parser kept as packages/widget/src/testing/reference-parser.ts.
// Reported per input: the median of a few runs (one at 64 KB for the previous parser, whose worst inputs take
// seconds there), and the growth from 16 KB to 64 KB (4 is linear, 16 quadratic; on a busy machine a few
// milliseconds of garbage collection make small figures jump). "throws": the parser failed (stack overflow).
//
// Then the cost in the browser: the gzipped size of the widget's chat module (where markdown lives), and of the
// markdown module bundled on its own (bundle-size.bench.ts has the widget's sizes beside other widgets').
import { gzipSync } from 'node:zlib';
import { buildWidgetAssets } from '../../packages/widget/src/build.ts';
import { parseMarkdown } from '../../packages/widget/src/markdown.ts';
import { PATHOLOGICAL_INPUTS } from '../../packages/widget/src/testing/pathological-inputs.ts';
import { parseMarkdown as previousParseMarkdown } from '../../packages/widget/src/testing/reference-parser.ts';
import { median } from '../lib/stats.ts';

const SIZES = [1024, 4096, 16_384, 65_536];
const ORDINARY_REPLY =
  '## Your order\n\nThanks for waiting! Your order **#4521** ships _tomorrow_; track it at https://track.example/4521.\n' +
  '- Item one, `SKU-1`\n- Item two, see [the guide](https://help.example/guide)\n\n```\nreturn code 0\n```\n';
const INPUTS: Record<string, (bytes: number) => string> = {
  'ordinary reply': (bytes) =>
    ORDINARY_REPLY.repeat(Math.ceil(bytes / ORDINARY_REPLY.length)).slice(0, bytes),
  ...PATHOLOGICAL_INPUTS,
};

/** Median time of `runs` parses, or NaN when the parser throws (the previous one overflows its stack on some). */
function timeMs(parse: (text: string) => unknown, text: string, runs: number): number {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    // Each run starts from a collected heap (the bench runs with --expose-gc), so one run's garbage is not the next's.
    (globalThis as { gc?: () => void }).gc?.();
    const started = performance.now();
    try {
      parse(text);
    } catch {
      return Number.NaN;
    }
    times.push(performance.now() - started);
  }
  return median(times);
}

const fmt = (ms: number) =>
  (Number.isNaN(ms) ? 'throws' : ms < 10 ? ms.toFixed(2) : ms.toFixed(0)).padStart(8);

// Warm both up on ordinary text so the first row does not carry the compilation.
for (let i = 0; i < 20; i++) {
  parseMarkdown(ORDINARY_REPLY.repeat(20));
  previousParseMarkdown(ORDINARY_REPLY.repeat(20));
}

console.log(
  `${'input'.padEnd(40)}${'parser'.padEnd(10)}${SIZES.map((s) => `${s / 1024} KB`.padStart(8)).join('')}  16→64 KB`,
);
for (const [name, make] of Object.entries(INPUTS)) {
  for (const [label, parse] of [
    ['linear', parseMarkdown],
    ['previous', previousParseMarkdown],
  ] as const) {
    const ms = SIZES.map((bytes) =>
      timeMs(parse, make(bytes), label === 'previous' && bytes >= 65_536 ? 1 : 7),
    );
    const growth = ms[3]! / Math.max(ms[2]!, 0.01);
    console.log(`${name.padEnd(40)}${label.padEnd(10)}${ms.map(fmt).join('')}  ×${growth.toFixed(1)}`);
  }
}

const { build } = await import('esbuild');
const alone = await build({
  stdin: {
    contents: "export { renderMarkdown, hideUnclosedMarkers } from './markdown.ts';",
    resolveDir: new URL('../../packages/widget/src/', import.meta.url).pathname,
    loader: 'ts',
  },
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'browser',
  target: ['es2020'],
  minify: true,
  logLevel: 'silent',
});
const gz = (text: string) => gzipSync(text, { level: 9 }).length;
const { chat } = await buildWidgetAssets();
const markdown = alone.outputFiles[0]!.text;
console.log(`\nthe widget's chat module: ${chat.code.length} bytes, ${gz(chat.code)} gzipped`);
console.log(`markdown module alone: ${markdown.length} bytes, ${gz(markdown)} gzipped`);
