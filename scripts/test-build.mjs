// Compiles the test files a run is about to start into plain JavaScript, once per run, so that each file's process
// loads one bundle with Node's own loader instead of hundreds of TypeScript modules through `tsx`'s loader hooks.
// On Node 20 those hooks run on a separate thread and every `import` (node_modules included) is a round trip to it:
// loading the server's module graph that way cost each test process 2–4 s of CPU, about a third of the whole suite's
// CPU on this 2-core machine. One esbuild build of all the files (code shared between them split into chunks) takes
// seconds.
//
// What stays as it was, so a test cannot tell the difference:
// - `import.meta.url`, `import.meta.dirname` and `import.meta.filename` are the original file's, so fixtures and
//   files found relative to a module are found where they are;
// - packages from node_modules are not bundled: they are imported from where Node would find them (resolved from
//   the importing file, so a workspace's own node_modules count), one instance each as before;
// - names of classes and functions are kept (`keepNames`: errors are reported by their class name);
// - source maps point stack traces at the TypeScript lines (the runner turns them on).
// Child processes a test starts (the CLI, servers, fault nodes) still run their TypeScript sources with `tsx`
// (packages/testing/src/process.ts): only the test file's own process loads the bundle.
import { readFile, rm } from 'node:fs/promises';
import { dirname, extname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, transform } from 'esbuild';

const SOURCE = /\.(ts|tsx|mts|mjs|js)$/;
const LOADERS = { '.ts': 'ts', '.mts': 'ts', '.tsx': 'tsx', '.mjs': 'js', '.js': 'js' };

/**
 * The module compiled on its own with the `import.meta` fields a module reads its own place from set to the original
 * file's (as expressions only: a string that merely spells `import.meta.url` is left alone), with an inline source
 * map that the bundle's map carries on to the TypeScript lines.
 */
async function keepOwnPlace(path) {
  const result = await transform(await readFile(path, 'utf8'), {
    loader: LOADERS[extname(path)],
    format: 'esm',
    target: 'node20',
    sourcefile: path,
    sourcemap: 'inline',
    // As tsconfig.json compiles them (what `tsx` reads): class fields with define semantics, imports kept as written.
    tsconfigRaw: { compilerOptions: { target: 'ES2022', verbatimModuleSyntax: true } },
    define: {
      'import.meta.url': JSON.stringify(pathToFileURL(path).href),
      'import.meta.dirname': JSON.stringify(dirname(path)),
      'import.meta.filename': JSON.stringify(path),
    },
  });
  return result.code;
}

/** Leaves every package outside the workspace to Node, imported by the absolute path esbuild resolved it to. */
function repositoryOnly(root) {
  const ownPackage = (path) => path.startsWith('@parley/');
  return {
    name: 'repository-only',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === 'resolving' || ownPackage(args.path) || args.path.startsWith('node:')) {
          return args.path.startsWith('node:') ? { path: args.path, external: true } : undefined;
        }
        const found = await b.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: 'resolving',
        });
        if (found.errors.length > 0) return { errors: found.errors };
        // A Node built-in imported without `node:` resolves to no file.
        if (!found.path || found.external) return { path: args.path, external: true };
        return { path: found.path, external: true };
      });
      b.onLoad({ filter: SOURCE }, async (args) => {
        const inRepository = !relative(root, args.path).startsWith('..');
        const dependency =
          args.path.includes('/node_modules/') && !args.path.includes('/node_modules/@parley/');
        if (!inRepository || dependency) return undefined;
        return { contents: await keepOwnPlace(args.path), loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

/**
 * Builds `files` (paths relative to `root`) into `outDir`, which is emptied first. Returns, for each file, the
 * bundle to run. `outDir` must lie inside `root` (Node finds the bundles' packages from there).
 */
export async function buildTests(files, { root, outDir }) {
  await rm(outDir, { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: files.map((f) => join(root, f)),
    outdir: outDir,
    outbase: root,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    keepNames: true,
    // Resolve packages as Node does: no bundlers' `module` condition or field (their files are not always valid
    // Node ESM, @opentelemetry/api's are not).
    conditions: [],
    mainFields: ['main'],
    sourcemap: 'linked',
    logLevel: 'error',
    plugins: [repositoryOnly(root)],
  });
  return new Map(files.map((f) => [f, join(outDir, f.replace(SOURCE, '.mjs'))]));
}
