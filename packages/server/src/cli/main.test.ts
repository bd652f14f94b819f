import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { PARLEY_CLI } from '@parley/testing/process';
import { commands } from './commands.ts';
import { runCli } from './main.ts';

const SERVER_PACKAGE = new URL('../../package.json', import.meta.url);

/** runCli in this process, with what it wrote to standard output and standard error. */
async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, (l) => out.push(l), { err: (l) => err.push(l), env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('parley: version, help and wrong command lines', () => {
  it('--version and -v print the release of packages/server/package.json', async () => {
    const { version } = JSON.parse(readFileSync(SERVER_PACKAGE, 'utf8'));
    for (const flag of ['--version', '-v'])
      assert.deepEqual(await cli(flag), { code: 0, out: `parley ${version}`, err: '' });
    assert.deepEqual(JSON.parse((await cli('--version', '--json')).out), { version });
  });

  it('no arguments, --help and help list every command', async () => {
    for (const argv of [[], ['--help'], ['-h'], ['help']]) {
      const { code, out } = await cli(...argv);
      assert.equal(code, 0, argv.join(' '));
      for (const c of commands)
        assert.match(out, new RegExp(`^  ${c.name} +${escapeRegExp(c.summary)}$`, 'm'));
    }
  });

  it('every command explains itself with --help (or -h): its synopsis and every option; nothing runs', async () => {
    for (const command of commands) {
      for (const flag of ['--help', '-h']) {
        const { code, out, err } = await cli(...command.name.split(' '), flag);
        assert.equal(code, 0, command.name);
        assert.equal(err, '');
        assert.match(out, new RegExp(`^usage: parley ${command.name}\\b`));
        for (const [name, spec] of Object.entries(command.options)) {
          assert.match(
            out,
            new RegExp(`^  --${name}\\b.*${escapeRegExp(spec.description)}`, 'm'),
            `${command.name} --${name}`,
          );
          if (spec.required) assert.match(out, new RegExp(`usage: .* --${name}\\b(?! *\\])`));
        }
      }
    }
  });

  it('a command group with --help lists its commands; without an action it is a usage error', async () => {
    const help = await cli('companies', '--help');
    assert.equal(help.code, 0);
    assert.match(help.out, /^usage: parley companies <create\|list>/);
    const bare = await cli('companies');
    assert.deepEqual(bare, {
      code: 2,
      out: '',
      err: 'parley: "companies" needs one of: create, list\nRun "parley companies --help" for details.',
    });
  });

  it('an unknown command says so (with the nearest command word) on stderr and exits 2, stdout empty', async () => {
    assert.deepEqual(await cli('compnies', 'create', '--name', 'X'), {
      code: 2,
      out: '',
      err: 'parley: unknown command "compnies" (did you mean "companies"?)\nRun "parley --help" for the list of commands.',
    });
    assert.deepEqual(await cli('frobnicate'), {
      code: 2,
      out: '',
      err: 'parley: unknown command "frobnicate"\nRun "parley --help" for the list of commands.',
    });
    const action = await cli('companies', 'delete', '--name', 'X');
    assert.equal(action.code, 2);
    assert.match(action.err, /^parley: unknown command "companies delete"; "companies" has: create, list\n/);
  });

  it('an unknown option, a missing value and a stray argument are usage errors (exit 2) that point at --help', async () => {
    for (const [argv, message] of [
      [
        ['companies', 'create', '--name', 'X', '--colour', 'red'],
        'unknown option --colour for "companies create"',
      ],
      [['companies', 'create', '--name'], '--name needs a value'],
      [['companies', 'create', 'X'], 'unexpected argument "X"'],
      [['--frobnicate'], 'unknown option --frobnicate'],
    ] as const) {
      const { code, out, err } = await cli(...argv);
      assert.equal(code, 2, argv.join(' '));
      assert.equal(out, '');
      assert.ok(err.startsWith(`parley: ${message}\n`), err);
      assert.match(err, /Run "parley [a-z -]*--help"/);
    }
    const json = await cli('companies', 'create', '--colour', 'red', '--json');
    assert.equal(json.code, 2);
    assert.deepEqual(JSON.parse(json.out), {
      error: { code: 'usage', message: 'unknown option --colour for "companies create"' },
    });
  });

  it('the process exits with the same codes (0 for --version, 2 for an unknown command)', () => {
    const version = spawnSync(process.execPath, [...PARLEY_CLI, '--version'], { encoding: 'utf8' });
    assert.equal(version.status, 0);
    assert.match(version.stdout, /^parley \d+\.\d+\.\d+\n$/);
    const unknown = spawnSync(process.execPath, [...PARLEY_CLI, 'frobnicate'], { encoding: 'utf8' });
    assert.equal(unknown.status, 2);
    assert.equal(unknown.stdout, '');
    assert.match(unknown.stderr, /^parley: unknown command "frobnicate"\n/);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
