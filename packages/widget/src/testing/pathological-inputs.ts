import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const repeatTo = (unit: string, bytes: number) =>
  unit.repeat(Math.ceil(bytes / unit.length)).slice(0, Math.max(bytes, unit.length));
const half = (bytes: number, unit: string) => unit.repeat(Math.max(1, Math.floor(bytes / 2 / unit.length)));

/**
 * Markdown that makes naive parsers super-linear, by name, each built to about `bytes` characters: the message that
 * froze an agent's inbox, the families of CommonMark's pathological tests (emphasis, brackets, links, backticks,
 * block quotes, lists), and inputs aimed at this parser's own bounds (deep `__` nesting, a long refused link
 * destination shared by many `[`, bare URLs that never end).
 */
export const PATHOLOGICAL_INPUTS: Record<string, (bytes: number) => string> = {
  'a_ runs then _x': (bytes) => `${repeatTo('a_', bytes - 3)} _x`,
  'nested emphasis': (bytes) => `${half(bytes, '*a ')}b${half(bytes, ' a*')}`,
  'emphasis closers without openers': (bytes) => repeatTo('a_ ', bytes),
  'emphasis openers without closers': (bytes) => repeatTo('_a ', bytes),
  'star runs': (bytes) => repeatTo('*a', bytes),
  'double star runs': (bytes) => repeatTo('**a', bytes),
  'mismatched openers and closers': (bytes) => repeatTo('*a_ ', bytes),
  'only [': (bytes) => repeatTo('[', bytes),
  'only ]': (bytes) => repeatTo(']', bytes),
  'nested brackets': (bytes) => `${half(bytes, '[')}a${half(bytes, ']')}`,
  '[ (]( runs': (bytes) => repeatTo('[ (](', bytes),
  'unclosed links': (bytes) => repeatTo('[a](b', bytes),
  'unclosed angle links': (bytes) => repeatTo('[a](<b', bytes),
  'many [ before one refused destination': (bytes) => `${half(bytes, '[')}x](javascript:${half(bytes, 'a')})`,
  'only backticks': (bytes) => repeatTo('`', bytes),
  'escaped backticks': (bytes) => repeatTo('\\``', bytes),
  'growing backtick runs': (bytes) => {
    let text = '';
    for (let run = 1; text.length < bytes; run++) text += `e${'`'.repeat(run)}`;
    return text;
  },
  'nested block quotes': (bytes) => `${repeatTo('> ', bytes)}a`,
  'nested list markers': (bytes) => `${repeatTo('- ', bytes)}a`,
  'deep __ nesting': (bytes) => `${half(bytes, '__')}x${half(bytes, '__')}`,
  'bare URLs that never end': (bytes) => repeatTo('http://.', bytes),
  'list lines': (bytes) => repeatTo('- a *b\n', bytes),
  'fence lines': (bytes) => repeatTo('```\n', bytes),
};

/**
 * Parses every one of {@link PATHOLOGICAL_INPUTS} at `bytes` characters in a worker thread, reporting which finished
 * within `boundMs`; the worker is then ended, however far it got. `parserModule` (an absolute path; default
 * src/markdown.ts) must export `parseMarkdown`.
 */
export async function parseInWorker(
  bytes: number,
  boundMs: number,
  parserModule = fileURLToPath(new URL('../markdown.ts', import.meta.url)),
): Promise<{ done: string[]; pending: string[] }> {
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    // Worker threads do not inherit the test process's tsx loader: load the TypeScript modules through its API.
    const { require: load } = require('tsx/cjs/api');
    const { parseMarkdown } = load(workerData.parserModule, workerData.parserModule);
    const { PATHOLOGICAL_INPUTS } = load(workerData.inputsModule, workerData.inputsModule);
    for (const name of workerData.names) {
      parseMarkdown(PATHOLOGICAL_INPUTS[name](workerData.bytes));
      parentPort.postMessage(name);
    }
  `;
  const names = Object.keys(PATHOLOGICAL_INPUTS);
  const inputsModule = fileURLToPath(import.meta.url);
  const done: string[] = [];
  const worker = new Worker(source, { eval: true, workerData: { parserModule, inputsModule, names, bytes } });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, boundMs);
    worker.on('message', (name: string) => {
      done.push(name);
      if (done.length === names.length) {
        clearTimeout(timer);
        resolve();
      }
    });
    worker.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
  await worker.terminate();
  return { done, pending: names.filter((name) => !done.includes(name)) };
}
