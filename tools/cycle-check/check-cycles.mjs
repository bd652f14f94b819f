// `npm run check:cycles`: fails (exit 1) when run-time imports form a cycle anywhere in packages/*/src, faults/
// or bench/. Type-only imports (`import type …`) are erased before the code runs, so they cannot make a cycle at
// run time: madge's TypeScript detective skips them (`skipTypeImports`) and resolves paths with the root
// tsconfig.json.
//
// One TypeScript rule makes "type-only" subtle: with `verbatimModuleSyntax` (root tsconfig.json) an import whose
// specifiers are all inline types, `import { type A } from '…'`, still loads that module at run time (it is
// emitted as `import {} from '…'`), while madge counts it as type-only. Such imports are refused here; write
// `import type { A } from '…'` instead.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const packageSources = readdirSync(join(root, 'packages'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => join(root, 'packages', entry.name, 'src'));
const roots = [...packageSources, join(root, 'faults'), join(root, 'bench')];
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

let failed = false;

/** `import { type A, type B } from '…'` / `export { type A } from '…'`: a run-time import madge would not count. */
const INLINE_TYPE_ONLY = /(?:^|\n)\s*(?:import|export)\s*\{([^}]*)\}\s*from\s*['"]([^'"]+)['"]/g;
for (const file of Object.keys(result.obj())) {
  if (!file.endsWith('.ts')) continue;
  for (const match of readFileSync(join(root, file), 'utf8').matchAll(INLINE_TYPE_ONLY)) {
    const names = match[1]
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    if (names.length > 0 && names.every((name) => name.startsWith('type '))) {
      console.error(
        `check:cycles: ${show(file)}: every name imported from '${match[2]}' is a type: use \`import type\``,
      );
      failed = true;
    }
  }
}

const cycles = result.circular();
if (cycles.length > 0) {
  console.error(`check:cycles: ${cycles.length} import cycle(s) among run-time imports:`);
  cycles.forEach((cycle, index) => {
    console.error(`  ${index + 1}) ${[...cycle, cycle[0]].map(show).join(' → ')}`);
  });
  failed = true;
}

const notFollowed = result.warnings().skipped;
if (failed) {
  process.exitCode = 1;
} else {
  console.log(
    `check:cycles: no import cycle among the run-time imports of ${Object.keys(result.obj()).length} modules` +
      (notFollowed.length > 0 ? ` (packages not followed: ${notFollowed.join(', ')})` : ''),
  );
}
