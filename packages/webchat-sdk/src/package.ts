import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = fileURLToPath(new URL('../', import.meta.url));
const REPO = resolve(PACKAGE, '../..');
/** Where the declarations of the SDK and of the protocol it bundles land (tsconfig.types.json: rootDir `packages/`). */
const TYPES_ENTRY = 'webchat-sdk/src/index.d.ts';
const PROTOCOL_ENTRY = 'webchat-protocol/src/index.d.ts';

/**
 * Stages `@parley/webchat-sdk` as it is published, in `outDir`: one ES module for Node and browsers
 * (`dist/index.js`: the SDK with the protocol package and the centrifuge client bundled, so the tarball has no
 * dependencies and installs alone), its `.d.ts` declarations (the protocol's types included), the README and the
 * examples, and a package.json pointing at them. `npm pack` in `outDir` makes the tarball.
 */
export async function stagePackage(outDir: string): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(join(outDir, 'dist'), { recursive: true });
  const { build } = await import('esbuild');
  await build({
    entryPoints: [join(PACKAGE, 'src/index.ts')],
    outfile: join(outDir, 'dist/index.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    target: ['es2020', 'node20'],
    legalComments: 'eof',
    logLevel: 'warning',
  });
  writeDeclarations(join(outDir, 'dist/types'));
  cpSync(join(PACKAGE, 'README.md'), join(outDir, 'README.md'));
  cpSync(join(PACKAGE, 'examples'), join(outDir, 'examples'), { recursive: true });
  const source = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as Record<string, unknown>;
  const published = {
    name: source.name,
    version: source.version,
    description: source.description,
    type: 'module',
    sideEffects: false,
    engines: { node: '>=20' },
    exports: { '.': { types: `./dist/types/${TYPES_ENTRY}`, default: './dist/index.js' } },
    types: `./dist/types/${TYPES_ENTRY}`,
    files: ['dist', 'examples', 'README.md'],
    keywords: ['webchat', 'chat', 'centrifugo', 'parley', 'sdk'],
  };
  writeFileSync(join(outDir, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);
}

/**
 * Emits the declarations (tsc, tsconfig.types.json) and keeps those the entry reaches, with their imports made
 * publishable: relative `.ts` specifiers end in `.js`, and `@parley/webchat-protocol` names the bundled protocol's
 * declarations. A reached
 * declaration importing any other package would need it installed: that fails the build.
 */
function writeDeclarations(typesDir: string): void {
  const emitted = mkdtempSync(join(tmpdir(), 'parley-sdk-types-'));
  try {
    const tsc = spawnSync(
      process.execPath,
      [
        join(REPO, 'node_modules/typescript/bin/tsc'),
        '-p',
        join(PACKAGE, 'tsconfig.types.json'),
        '--outDir',
        emitted,
      ],
      { encoding: 'utf8' },
    );
    if (tsc.status !== 0) throw new Error(`tsc failed:\n${tsc.stdout}${tsc.stderr}`);
    const pending = [TYPES_ENTRY];
    const done = new Set<string>();
    while (pending.length > 0) {
      const file = pending.pop()!;
      if (done.has(file)) continue;
      done.add(file);
      const publishable = (specifier: string) => {
        const target = resolveSpecifier(file, specifier);
        pending.push(target);
        const path = relative(dirname(file), target).replace(/\.d\.ts$/, '.js');
        return path.startsWith('.') ? path : `./${path}`;
      };
      const text = readFileSync(join(emitted, file), 'utf8')
        // Import and export statements (not the examples in doc comments), and inline `import(…)` types.
        .replace(
          /^((?:import|export)\b[^;]*?\bfrom\s+)(['"])([^'"]+)\2/gm,
          (_, lead: string, quote: string, specifier: string) =>
            `${lead}${quote}${publishable(specifier)}${quote}`,
        )
        .replace(/\bimport\((['"])(\.[^'"]+)\1\)/g, (_, quote: string, specifier: string) => {
          return `import(${quote}${publishable(specifier)}${quote})`;
        });
      mkdirSync(dirname(join(typesDir, file)), { recursive: true });
      writeFileSync(join(typesDir, file), text);
    }
  } finally {
    rmSync(emitted, { recursive: true, force: true });
  }
}

/** The declaration file an import names, relative to the types root. */
function resolveSpecifier(from: string, specifier: string): string {
  if (specifier === '@parley/webchat-protocol') return PROTOCOL_ENTRY;
  if (specifier.startsWith('.')) return join(dirname(from), specifier.replace(/\.(ts|js)$/, '.d.ts'));
  throw new Error(`the published declarations would import ${specifier} (${from}); it is not a dependency`);
}

// `npm run pack -w @parley/webchat-sdk` stages the package in dist/package and packs it into dist/.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const staged = join(PACKAGE, 'dist/package');
  await stagePackage(staged);
  const pack = spawnSync('npm', ['pack', '--pack-destination', join(PACKAGE, 'dist')], {
    cwd: staged,
    stdio: 'inherit',
  });
  process.exit(pack.status ?? 1);
}
