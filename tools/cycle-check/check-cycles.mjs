// `npm run check:cycles` (node --import tsx tools/cycle-check/check-cycles.mjs): fails (exit 1) when
//
// 1. run-time imports form a cycle of files anywhere in packages/*/src, faults/ or bench/ (madge), or
// 2. the entries of any folder import each other in a loop, type imports included (folder-loops.ts), or an import
//    breaks the layers drawn in docs/layers.json (layers.ts) — beyond the known violations the baseline lists,
//    which may only shrink (baseline.ts; docs/architecture.md "Layers").
//
// Options: --root DIR (another repository, for the tests), --layers FILE (default docs/layers.json), --baseline FILE
// (the known violations; without it every violation fails), --update-baseline (rewrite it to today's, refused while
// anything new is found), --accept-new (with --update-baseline: list new violations too, after review), --all (print
// the known violations as well).
//
// On 1: type-only imports (`import type …`) are erased before the code runs, so they cannot make a cycle at run
// time: madge's TypeScript detective skips them (`skipTypeImports`) and resolves paths with the root tsconfig.json.
// One TypeScript rule makes "type-only" subtle: with `verbatimModuleSyntax` (root tsconfig.json) an import whose
// specifiers are all inline types, `import { type A } from '…'`, still loads that module at run time (it is
// emitted as `import {} from '…'`), while madge counts it as type-only. Such imports are refused (structure.ts);
// write `import type { A } from '…'` instead.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import madge from 'madge';
import { checkStructure } from './structure.ts';

const { values: options } = parseArgs({
  options: {
    root: { type: 'string', default: join(dirname(fileURLToPath(import.meta.url)), '..', '..') },
    layers: { type: 'string', default: 'docs/layers.json' },
    baseline: { type: 'string' },
    'update-baseline': { type: 'boolean', default: false },
    'accept-new': { type: 'boolean', default: false },
    all: { type: 'boolean', default: false },
  },
});
const root = resolve(options.root);

const structure = checkStructure({
  root,
  layers: options.layers,
  baseline: options.baseline,
  updateBaseline: options['update-baseline'],
  acceptNew: options['accept-new'],
  all: options.all,
});
for (const line of structure.notes) console.log(line);
for (const line of structure.errors) console.error(line);
let failed = structure.failed;

if (!options['update-baseline']) failed = (await checkRunTimeCycles()) || failed;
if (failed) process.exitCode = 1;

/** Cycles of files among run-time imports; true when there is one. */
async function checkRunTimeCycles() {
  const packages = join(root, 'packages');
  const packageSources = existsSync(packages)
    ? readdirSync(packages, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => join(packages, entry.name, 'src'))
    : [];
  const roots = [...packageSources, join(root, 'faults'), join(root, 'bench')].filter((dir) =>
    existsSync(dir),
  );
  const show = (file) => relative(process.cwd(), join(root, file));
  const result = await madge(roots, {
    baseDir: root,
    fileExtensions: ['ts', 'mjs', 'js'],
    tsConfig: join(root, 'tsconfig.json'),
    detectiveOptions: {
      ts: { skipTypeImports: true },
      es6: { skipTypeImports: true },
    },
  });
  const cycles = result.circular();
  if (cycles.length > 0) {
    console.error(`check:cycles: ${cycles.length} import cycle(s) among run-time imports:`);
    cycles.forEach((cycle, index) => {
      console.error(`  ${index + 1}) ${[...cycle, cycle[0]].map(show).join(' → ')}`);
    });
    return true;
  }
  const notFollowed = result.warnings().skipped;
  console.log(
    `check:cycles: no import cycle among the run-time imports of ${Object.keys(result.obj()).length} modules` +
      (notFollowed.length > 0 ? ` (packages not followed: ${notFollowed.join(', ')})` : ''),
  );
  return false;
}
