import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { importsOf } from './imports.ts';
import { match } from './layers.ts';
import { checkStructure, type StructureOptions } from './structure.ts';

// Each test writes a small repository in a temporary folder: one package, app, drawn by its own docs/layers.json
// as Root (its main and version files) over Web over Jobs and Mail side by side over Base, with TestKit (its
// `testing` folder) on top.
const LAYERS = {
  testSupport: ['packages/*/src/**/testing'],
  production: ['packages/*/src'],
  scopes: [
    {
      root: 'packages/app/src',
      tiers: [
        [{ name: 'TestKit', folders: ['**/testing'] }],
        [{ name: 'Root', folders: ['main.ts', 'version.ts'] }],
        [{ name: 'Web', folders: ['web'] }],
        [
          { name: 'Jobs', folders: ['jobs'] },
          { name: 'Mail', folders: ['mail'] },
        ],
        [{ name: 'Base', folders: ['base'] }],
      ],
      never: [
        { from: ['*'], to: ['TestKit'], why: 'production code never imports test support' },
        { from: ['Base'], to: ['*'], why: 'the base knows no feature' },
      ],
    },
  ],
};

/** A clean tree: every arrow runs down, a test reaches up to test support and the root, which is allowed. */
const CLEAN: Record<string, string> = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', allowImportingTsExtensions: true },
  }),
  'docs/layers.json': JSON.stringify(LAYERS, null, 2),
  'packages/app/src/main.ts': "import { serve } from './web/serve.ts';\nserve();\n",
  'packages/app/src/version.ts': "export const VERSION = '1';\n",
  'packages/app/src/web/serve.ts': [
    "import type { Config } from '../base/config.ts';",
    "import { store } from '../base/store.ts';",
    "import { schedule } from '../jobs/schedule.ts';",
    'export function serve(config?: Config) {',
    '  schedule();',
    '  return store(config);',
    '}',
    '',
  ].join('\n'),
  'packages/app/src/web/routes/home.ts':
    "import { page } from '../views/page.ts';\nexport const home = page;\n",
  'packages/app/src/web/views/page.ts': "export function page() {\n  return '<p>';\n}\n",
  'packages/app/src/jobs/schedule.ts':
    "import { store } from '../base/store.ts';\nexport const schedule = store;\n",
  'packages/app/src/mail/send.ts': 'export function send() {}\n',
  'packages/app/src/base/config.ts': 'export interface Config {\n  port: number;\n}\n',
  'packages/app/src/base/store.ts':
    "import type { Config } from './config.ts';\nexport const store = (c?: Config) => c;\n",
  'packages/app/src/testing/start-app.ts': "import '../main.ts';\nexport function startApp() {}\n",
  'packages/app/src/base/store.test.ts': [
    "import { startApp } from '../testing/start-app.ts';",
    "import { serve } from '../web/serve.ts';",
    'startApp();',
    'serve();',
    '',
  ].join('\n'),
};

const made: string[] = [];
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** The clean tree with some files changed (a string) or removed (null), in a folder of its own. */
function repository(changes: Record<string, string | null> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'parley-cycle-check-'));
  made.push(root);
  for (const [file, text] of Object.entries({ ...CLEAN, ...changes })) {
    if (text === null) continue;
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
}

function check(root: string, options: Partial<StructureOptions> = {}) {
  return checkStructure({ root, layers: 'docs/layers.json', ...options });
}

describe('folder loops', () => {
  test('a clean tree passes, its test reaching up to test support and the root', () => {
    const report = check(repository());
    assert.deepEqual(report.errors, []);
    assert.equal(report.failed, false);
    assert.deepEqual(report.notes, [
      'check:cycles: no folder loop and no import breaking docs/layers.json; 11 files, 10 imports read',
    ]);
  });

  test('a loop of two folders closed by a type-only import fails, naming files, lines and names', () => {
    const root = repository({
      'packages/app/src/web/views/page.ts': [
        "import type { Home } from '../routes/home.ts';",
        'export function page(_: Home | undefined) {',
        "  return '<p>';",
        '}',
        '',
      ].join('\n'),
      'packages/app/src/web/routes/home.ts': [
        "import { page } from '../views/page.ts';",
        'export type Home = string;',
        'export const home = page;',
        '',
      ].join('\n'),
    });
    const report = check(root);
    assert.equal(report.failed, true);
    assert.deepEqual(report.errors, [
      'check:cycles: folder loop in packages/app/src/web, 2 entries: routes/, views/ (shortest: routes/ → views/ → routes/)',
      '  routes/ → views/',
      '    routes/home.ts:1 imports page from views/page.ts',
      '  views/ → routes/',
      '    views/page.ts:1 imports type Home from routes/home.ts',
    ]);
  });

  test('inline type names and `export … from` make arrows too', () => {
    const root = repository({
      'packages/app/src/web/views/page.ts':
        "export { home } from '../routes/home.ts';\nexport const page = () => 1;\n",
      'packages/app/src/web/views/types.ts':
        "import { type Home, home } from '../routes/home.ts';\nexport type H = Home;\nhome();\n",
      'packages/app/src/web/routes/home.ts': [
        "import { page } from '../views/page.ts';",
        'export type Home = string;',
        'export const home = page;',
        '',
      ].join('\n'),
    });
    assert.deepEqual(check(root).errors, [
      'check:cycles: folder loop in packages/app/src/web, 2 entries: routes/, views/ (shortest: routes/ → views/ → routes/)',
      '  routes/ → views/',
      '    routes/home.ts:1 imports page from views/page.ts',
      '  views/ → routes/',
      '    views/page.ts:1 imports home from routes/home.ts',
      '    views/types.ts:1 imports type Home, home from routes/home.ts',
    ]);
  });

  test('a subfolder and a file of its parent are two entries: an arrow up to the file is fine, one back is a loop', () => {
    const upOnly = repository({
      'packages/app/src/web/routes/home.ts':
        "import { serve } from '../serve.ts';\nexport const home = serve;\n",
    });
    assert.deepEqual(check(upOnly).errors, []);

    const loop = repository({
      'packages/app/src/web/routes/home.ts':
        "import { serve } from '../serve.ts';\nexport const home = serve;\n",
      'packages/app/src/web/serve.ts': [
        "import { store } from '../base/store.ts';",
        "import { home } from './routes/home.ts';",
        'export const serve = () => store(home === undefined ? undefined : { port: 1 });',
        '',
      ].join('\n'),
    });
    assert.deepEqual(check(loop).errors, [
      'check:cycles: folder loop in packages/app/src/web, 2 entries: routes/, serve.ts (shortest: routes/ → serve.ts → routes/)',
      '  routes/ → serve.ts',
      '    routes/home.ts:1 imports serve from serve.ts',
      '  serve.ts → routes/',
      '    serve.ts:2 imports home from routes/home.ts',
    ]);
  });

  test('two files of one folder importing each other, for types only, are a loop of that folder', () => {
    const root = repository({
      'packages/app/src/base/config.ts':
        "import type { Store } from './store.ts';\nexport interface Config {\n  store?: Store;\n}\n",
      'packages/app/src/base/store.ts':
        "import type { Config } from './config.ts';\nexport type Store = (c?: Config) => void;\nexport const store = (c?: Config) => c;\n",
    });
    assert.deepEqual(check(root).errors, [
      'check:cycles: folder loop in packages/app/src/base, 2 entries: config.ts, store.ts (shortest: config.ts → store.ts → config.ts)',
      '  config.ts → store.ts',
      '    config.ts:1 imports type Store from store.ts',
      '  store.ts → config.ts',
      '    store.ts:1 imports type Config from config.ts',
    ]);
  });

  test('a test file makes no arrow: it may import what imports its own folder', () => {
    const root = repository({
      'packages/app/src/jobs/schedule.test.ts': "import { serve } from '../web/serve.ts';\nserve();\n",
    });
    assert.deepEqual(check(root).errors, []);
  });
});

describe('layers', () => {
  test('an import up a tier, across to a layer beside, and one a never rule forbids each fail with file, line and names', () => {
    const root = repository({
      'packages/app/src/web/views/page.ts':
        "import { VERSION } from '../../version.ts';\nexport const page = () => VERSION;\n",
      'packages/app/src/jobs/schedule.ts': [
        "import { send } from '../mail/send.ts';",
        "import { store } from '../base/store.ts';",
        'export const schedule = () => store(send());',
        '',
      ].join('\n'),
      'packages/app/src/base/config.ts': [
        "import type { Letter } from '../mail/letter.ts';",
        'export interface Config {',
        '  port: number;',
        '  welcome?: Letter;',
        '}',
        '',
      ].join('\n'),
      'packages/app/src/mail/letter.ts': 'export type Letter = string;\n',
    });
    assert.deepEqual(check(root).errors, [
      'check:cycles: 3 import(s) break the layers of docs/layers.json:',
      '  packages/app/src/base/config.ts:1 imports type Letter from packages/app/src/mail/letter.ts: Base never imports Mail: the base knows no feature',
      '  packages/app/src/jobs/schedule.ts:1 imports send from packages/app/src/mail/send.ts: Jobs and Mail stand side by side',
      '  packages/app/src/web/views/page.ts:1 imports VERSION from packages/app/src/version.ts: runs up from Web to Root',
    ]);
  });

  test('production code never imports test support or a test file; a test and test support may', () => {
    const root = repository({
      'packages/app/src/testing/fake-mail.ts': 'export const fake = 1;\n',
      'packages/app/src/mail/send.ts': [
        "import { fake } from '../testing/fake-mail.ts';",
        "import type { T } from './send.test.ts';",
        'export function send(_?: T) {',
        '  return fake;',
        '}',
        '',
      ].join('\n'),
      'packages/app/src/mail/send.test.ts':
        "import { fake } from '../testing/fake-mail.ts';\nexport type T = typeof fake;\n",
    });
    assert.deepEqual(check(root).errors, [
      'check:cycles: 2 import(s) break the layers of docs/layers.json:',
      '  packages/app/src/mail/send.ts:1 imports fake from packages/app/src/testing/fake-mail.ts: production code never imports test support',
      '  packages/app/src/mail/send.ts:2 imports type T from packages/app/src/mail/send.test.ts: nothing but a test imports a test file',
    ]);
  });

  test('a layers file that does not fit the tree fails, whatever the baseline', () => {
    const layers = structuredClone(LAYERS);
    layers.scopes[0].tiers[2][0].folders.push('api');
    layers.scopes[0].tiers[4][0].folders.push('jobs');
    layers.scopes[0].never.push({ from: ['Bsae'], to: ['Web'], why: 'typo' });
    const root = repository({
      'docs/layers.json': JSON.stringify(layers),
      'packages/app/src/extra/tool.ts': 'export const tool = 1;\n',
    });
    assert.deepEqual(check(root, { baseline: 'baseline.json' }).errors, [
      'check:cycles: docs/layers.json does not fit the tree:',
      '  packages/app/src/extra/tool.ts is in no layer of packages/app/src: add its folder to a layer',
      '  packages/app/src/jobs/schedule.ts is in two layers: Jobs (jobs) and Base (jobs)',
      "  layer Web of packages/app/src lists 'api', which holds no file of its own",
      '  a never rule of packages/app/src names no layer: Bsae',
    ]);
  });

  test('without a layers file the check fails, and still names the loops', () => {
    const root = repository({
      'docs/layers.json': null,
      'packages/app/src/web/views/page.ts':
        "import { home } from '../routes/home.ts';\nexport const page = home;\n",
      'packages/app/src/web/routes/home.ts':
        "import type { page } from '../views/page.ts';\nexport const home = 1;\n",
    });
    assert.deepEqual(check(root).errors, [
      'check:cycles: docs/layers.json does not fit the tree:',
      '  there is no such file',
      'check:cycles: folder loop in packages/app/src/web, 2 entries: routes/, views/ (shortest: routes/ → views/ → routes/)',
      '  routes/ → views/',
      '    routes/home.ts:1 imports type page from views/page.ts',
      '  views/ → routes/',
      '    views/page.ts:1 imports home from routes/home.ts',
    ]);
  });

  test('patterns: a name is a folder or file with all under it, * one name, ** any folders', () => {
    assert.equal(match('web', 'web/routes/home.ts'), 1);
    assert.equal(match('main.ts', 'main.ts'), 1);
    assert.equal(match('web', 'webchat/x.ts'), -1);
    assert.equal(match('**/testing', 'testing/start-app.ts'), 1);
    assert.equal(match('**/testing', 'web/routes/testing/x.ts'), 3);
    assert.equal(match('packages/*/src', 'packages/app/src/main.ts'), 3);
    assert.equal(match('**/testing', 'web/testing.ts'), -1);
  });
});

describe('baseline', () => {
  const tangled = {
    'packages/app/src/base/config.ts':
      "import type { Store } from './store.ts';\nexport interface Config {\n  store?: Store;\n}\n",
    'packages/app/src/base/store.ts':
      "import type { Config } from './config.ts';\nexport type Store = (c?: Config) => void;\nexport const store = (c?: Config) => c;\n",
    'packages/app/src/web/views/page.ts':
      "import { VERSION } from '../../version.ts';\nexport const page = () => VERSION;\n",
  };

  test('is written only with --accept-new, then holds today’s violations as known', () => {
    const root = repository(tangled);
    const refused = check(root, { baseline: 'baseline.json', updateBaseline: true });
    assert.equal(refused.failed, true);
    assert.equal(
      refused.errors[0],
      'check:cycles: not writing baseline.json: the baseline may only shrink, and these are new (fix them, or add --accept-new after review):',
    );

    const written = check(root, { baseline: 'baseline.json', updateBaseline: true, acceptNew: true });
    assert.deepEqual(written.errors, []);
    assert.deepEqual(written.notes, [
      'check:cycles: wrote baseline.json: 2 file-to-file imports in folder loops, 1 breaking the layers (0 removed, 3 added)',
    ]);
    const baseline = JSON.parse(readFileSync(join(root, 'baseline.json'), 'utf8'));
    assert.deepEqual(baseline.loops, [
      'packages/app/src/base/config.ts -> packages/app/src/base/store.ts',
      'packages/app/src/base/store.ts -> packages/app/src/base/config.ts',
    ]);
    assert.deepEqual(baseline.layers, ['packages/app/src/web/views/page.ts -> packages/app/src/version.ts']);

    const known = check(root, { baseline: 'baseline.json' });
    assert.deepEqual(known.errors, []);
    assert.deepEqual(known.notes, [
      'check:cycles: no folder loop and no import breaking docs/layers.json beyond those known in baseline.json ' +
        '(1 folder loop(s) of 2 file-to-file imports, 1 breaking the layers); 11 files, 12 imports read',
    ]);
  });

  test('a new import fails even inside a known loop, and only the new one is shown', () => {
    const root = repository(tangled);
    check(root, { baseline: 'baseline.json', updateBaseline: true, acceptNew: true });
    writeFileSync(
      join(root, 'packages/app/src/base/store.ts'),
      [
        "import type { Config } from './config.ts';",
        "import { defaults } from './defaults.ts';",
        'export type Store = (c?: Config) => void;',
        'export const store = (c: Config = defaults) => c;',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(root, 'packages/app/src/base/config.ts'),
      [
        "import type { Store } from './store.ts';",
        "import type { Defaults } from './defaults.ts';",
        'export interface Config {',
        '  store?: Store;',
        '  defaults?: Defaults;',
        '}',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(root, 'packages/app/src/base/defaults.ts'),
      "import type { Config } from './config.ts';\nexport type Defaults = object;\nexport const defaults: Config = {};\n",
    );
    const report = check(root, { baseline: 'baseline.json' });
    assert.equal(report.failed, true);
    assert.deepEqual(report.errors, [
      'check:cycles: folder loop in packages/app/src/base, 3 entries: config.ts, defaults.ts, store.ts (shortest: config.ts → defaults.ts → config.ts)',
      '  config.ts → defaults.ts',
      '    config.ts:2 imports type Defaults from defaults.ts',
      '  defaults.ts → config.ts',
      '    defaults.ts:1 imports type Config from config.ts',
      '  store.ts → defaults.ts',
      '    store.ts:2 imports defaults from defaults.ts',
      '  (and 2 import(s) of this loop that the baseline knows)',
    ]);
  });

  test('a listed violation that is gone fails until the baseline is rewritten, which --update-baseline does', () => {
    const root = repository(tangled);
    check(root, { baseline: 'baseline.json', updateBaseline: true, acceptNew: true });
    writeFileSync(join(root, 'packages/app/src/web/views/page.ts'), 'export const page = () => 1;\n');
    const stale = check(root, { baseline: 'baseline.json' });
    assert.deepEqual(stale.errors, [
      'check:cycles: 1 import(s) of baseline.json no longer break a rule: remove them (npm run check:cycles -- --update-baseline):',
      '  layers: packages/app/src/web/views/page.ts -> packages/app/src/version.ts',
    ]);

    const shrunk = check(root, { baseline: 'baseline.json', updateBaseline: true });
    assert.deepEqual(shrunk.notes, [
      'check:cycles: wrote baseline.json: 2 file-to-file imports in folder loops, 0 breaking the layers (1 removed, 0 added)',
    ]);
    assert.equal(check(root, { baseline: 'baseline.json' }).failed, false);
  });
});

test('npm run check:cycles fails on a folder loop, which madge does not see when an arrow is a type import', () => {
  const root = repository({
    'packages/app/src/web/views/page.ts':
      "import type { Home } from '../routes/home.ts';\nexport const page = (_?: Home) => 1;\n",
    'packages/app/src/web/routes/home.ts':
      "import { page } from '../views/page.ts';\nexport type Home = string;\nexport const home = page;\n",
  });
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'check-cycles.mjs'), '--root', root],
    { encoding: 'utf8', cwd: join(import.meta.dirname, '..', '..') },
  );
  assert.equal(run.status, 1, run.stderr);
  assert.match(
    run.stderr,
    /^check:cycles: folder loop in packages\/app\/src\/web, 2 entries: routes\/, views\//m,
  );
  assert.match(run.stderr, /^ {4}views\/page\.ts:1 imports type Home from routes\/home\.ts$/m);
  assert.match(run.stdout, /^check:cycles: no import cycle among the run-time imports of \d+ modules/m);
});

test('every kind of import is read with its names', () => {
  const source = [
    "import a, { b, type C, d as e } from './one.ts';",
    "import type { F } from './two.ts';",
    "import * as g from './three.ts';",
    "import './four.ts';",
    "export { h, type I } from './five.ts';",
    "export * from './six.ts';",
    "export type * as j from './seven.ts';",
    "const k = await import('./eight.ts');",
    "let l: import('./nine.ts').Deep.Name;",
    "import m = require('./ten.cjs');",
    'const n = await import(name);',
    '',
  ].join('\n');
  const found = importsOf('x.ts', source).map((i) => `${i.line} ${i.specifier}: ${i.names.join(', ')}`);
  assert.deepEqual(found, [
    '1 ./one.ts: default, b, type C, d',
    '2 ./two.ts: type F',
    '3 ./three.ts: *',
    '4 ./four.ts: (side effects)',
    '5 ./five.ts: h, type I',
    '6 ./six.ts: *',
    '7 ./seven.ts: type *',
    '8 ./eight.ts: import()',
    '9 ./nine.ts: type Deep.Name',
    '10 ./ten.cjs: *',
  ]);
});
