import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, join, relative } from 'node:path';
import { describe, test } from 'node:test';

/**
 * Every reference the repository makes resolves inside it, so a reader can follow each one. Read are the Markdown
 * and YAML files as a whole and the comments of every source file (TypeScript, JavaScript, shell):
 *
 * - a relative Markdown link `[text](path#anchor)` names a file that exists and, for Markdown, a heading anchor in it;
 * - a citation `docs/<file>.md "Heading"` (also `"A", "B" and "C"`, or `<file>.md "Heading"` beside the cited file)
 *   names a heading of that file, by its whole text or its text before a closing parenthesis; a YAML file's
 *   citation names a key of it;
 * - a path (`packages/…`, `src/…`, `docs/…`, `bench/…`, `faults/…`, `scripts/…`, `tools/…`, `./…`, `../…`, or any
 *   `a/b.ts`-like path) names a file or folder, relative to the citing file, its package or the repository root;
 *   a bare file name of ours (`name.ts`) names a file somewhere in the repository;
 * - nothing points outside the repository or at a line number (which moves with every edit).
 */

const root = join(import.meta.dirname, '..');

/** The files git tracks, and those it would track (not ignored): what a clone of the next commit holds. */
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\0')
  .filter((file) => file !== '' && existsSync(join(root, file)));
const fileSet = new Set(files);
const basenames = new Set(files.map((file) => basename(file)));
const folders = new Set(files.flatMap((file) => ancestors(file)));

function ancestors(file: string): string[] {
  const out: string[] = [];
  for (let dir = dirname(file); dir !== '.'; dir = dirname(dir)) out.push(dir);
  return out;
}

const SOURCE = new Set(['.ts', '.mjs', '.js', '.cjs']);
const PROSE = new Set(['.md', '.yaml', '.yml']);
const SHELL = (file: string) => file.startsWith('.ci/') || extname(file) === '.sh';

/** The text whose references count: prose as a whole, the comments of code (each comment on a line of its own). */
function referenceText(file: string): string | undefined {
  const ext = extname(file);
  if (!SOURCE.has(ext) && !PROSE.has(ext) && !SHELL(file)) return undefined;
  const text = readFileSync(join(root, file), 'utf8');
  if (PROSE.has(ext)) return text;
  if (SHELL(file))
    return text
      .split('\n')
      .map((line) => /(?:^|\s)#(?!!)(.*)$/.exec(line)?.[1] ?? '')
      .join('\n');
  return commentsOf(text);
}

const REGEX_BEFORE =
  /[(,=:[!&|?{};+\-*%<>~^]$|^$|\b(?:return|typeof|case|do|else|in|of|new|delete|void|throw|yield|await)$/;

/**
 * The comments of a JavaScript or TypeScript source, in order, with their line breaks kept: a small scanner that
 * steps over strings, template literals (and the code inside `${…}`) and regular expression literals.
 */
function commentsOf(source: string): string {
  const out: string[] = [];
  const templateDepths: number[] = [];
  let braces = 0;
  let last = ''; // the code just before (for telling a division from a regular expression)
  let i = 0;
  const n = source.length;
  const skipString = (quote: string) => {
    for (i++; i < n && source[i] !== quote && source[i] !== '\n'; i++) if (source[i] === '\\') i++;
    i++;
  };
  const skipTemplate = () => {
    for (; i < n; i++) {
      if (source[i] === '\\') i++;
      else if (source[i] === '`') {
        i++;
        return;
      } else if (source[i] === '$' && source[i + 1] === '{') {
        templateDepths.push(braces);
        braces++;
        i += 2;
        return;
      }
    }
  };
  while (i < n) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      out.push(source.slice(i + 2, end === -1 ? n : end));
      i = end === -1 ? n : end;
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      out.push(source.slice(i + 2, end === -1 ? n : end));
      i = end === -1 ? n : end + 2;
    } else if (c === "'" || c === '"') {
      skipString(c);
      last = 'x';
    } else if (c === '`') {
      i++;
      skipTemplate();
      last = 'x';
    } else if (c === '/' && REGEX_BEFORE.test(last.trimEnd().slice(-8))) {
      let inClass = false;
      for (i++; i < n && source[i] !== '\n'; i++) {
        if (source[i] === '\\') i++;
        else if (source[i] === '[') inClass = true;
        else if (source[i] === ']') inClass = false;
        else if (source[i] === '/' && !inClass) break;
      }
      i++;
      last = 'x';
    } else {
      if (c === '{') braces++;
      if (c === '}') {
        braces--;
        if (templateDepths.length > 0 && templateDepths.at(-1) === braces) {
          templateDepths.pop();
          i++;
          skipTemplate();
          last = 'x';
          continue;
        }
      }
      if (!/\s/.test(c) || last.at(-1) !== ' ') last = (last + (/\s/.test(c) ? ' ' : c)).slice(-16);
      i++;
    }
  }
  return out.join('\n');
}

/** Comment text with its line breaks and continuation marks (`*`, `//`) folded to spaces, so a citation may wrap. */
const folded = (text: string) => text.replace(/\n\s*(?:\*(?!\/)|\/\/|#)?\s*/g, ' ');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const heading of headingsOf(markdown)) {
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The headings of a Markdown text (outside code fences), as written. */
function headingsOf(markdown: string): string[] {
  const headings: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced && /^#{1,6}\s/.test(line)) headings.push(line.replace(/^#+\s*/, '').trim());
  }
  return headings;
}

/** A heading is cited by its whole text, or by its text before a parenthesis that ends it. */
function citableNames(markdown: string): Set<string> {
  return new Set(headingsOf(markdown).flatMap((h) => [h, h.replace(/\s*\(.*\)$/, '')]));
}

const readRepo = (file: string) => readFileSync(join(root, file), 'utf8');

/** The package folder (`packages/x`, `tools/x`) a file belongs to, if any. */
function packageOf(file: string): string | undefined {
  return ancestors(file).find((dir) => fileSet.has(`${dir}/package.json`));
}

/**
 * What a path written in `file` names: a file or folder relative to the file's folder or one above it (a capability
 * cites `messages/x.ts` of its own folder), to its package's `src/`, or to the repository root; a file of an installed
 * dependency (`ws/lib/sender.js`); or something git ignores on purpose (a build output under `dist/`, the `./data`
 * folder). Undefined when it names nothing.
 */
function resolve(file: string, path: string): string | undefined {
  const clean = path.replace(/\/$/, '');
  const pkg = packageOf(file);
  const bases = clean.startsWith('.') ? [dirname(file)] : [...ancestors(file), pkg && `${pkg}/src`, '.'];
  for (const base of bases) {
    if (base === undefined) continue;
    const candidate = join(base, clean);
    if (fileSet.has(candidate) || folders.has(candidate)) return candidate;
  }
  const dependency = join('node_modules', clean);
  if (!clean.startsWith('.') && existsSync(join(root, dependency))) return dependency;
  // `x/` as well as `x`: a pattern for a folder (`data/`) matches only with the slash.
  const ignored = join(dirname(file), clean);
  for (const candidate of [ignored, `${ignored}/`])
    if (spawnSync('git', ['check-ignore', '-q', '--no-index', candidate], { cwd: root }).status === 0)
      return ignored;
  return undefined;
}

interface Finding {
  file: string;
  problem: string;
}

type Kind = 'link' | 'citation' | 'path' | 'file name';

interface Checked {
  references: Record<Kind, number>;
  broken: Finding[];
}

const noReferences = (): Record<Kind, number> => ({ link: 0, citation: 0, path: 0, 'file name': 0 });

const ROOTS = '(?:packages|src|docs|bench|faults|scripts|tools)';
const EXT = '(?:ts|mjs|js|md|yaml)';
const PATH_CHAR = '[\\w.@/-]';
/** A path: one of the repository's top folders followed by more, `./` or `../` anything, or `a/b.ts`-like. */
const PATH = new RegExp(
  `(?<![\\w.@/:\\\\$-])(?:(?:\\.\\.?/)+${PATH_CHAR}+|${ROOTS}/${PATH_CHAR}*|[\\w-]+(?:/[\\w.-]+)+\\.${EXT}\\b)`,
  'g',
);
/** A bare TypeScript file name (`name.ts`, `name.test-suite.ts`): the sources are ours, build outputs are `.js`. */
const BARE_NAME = /(?<![\w.@/*\\$-])[A-Za-z][\w-]*(?:\.[\w-]+)*\.ts\b(?![\w/])/g;
/** `docs/x.md "A"`, `x.md "A", "B" and "C"`, `docs/x.md ("A")`. */
const CITATION =
  /((?:[\w.-]+\/)*[\w.-]+\.(?:md|yaml))\s+\(?((?:"[^"\n]+")(?:\s*(?:,\s*and|,|and)\s*"[^"\n]+")*)/g;
const MARKDOWN_LINK = /\[[^\]\n]*\]\(([^)\s]+)\)/g;
const LINE_NUMBER = /\b[\w./-]+\.(?:ts|mjs|js|md|yaml):\d+/g;
/** What would point outside the repository. Spelt so that this file's own source does not match. */
const OUTSIDE: Array<[RegExp, string]> = [
  [/\/work\//, 'an absolute path on a development machine'],
  [/\.\.\/shared\b/, 'a folder beside the repository'],
  [/(?<![\w-])research\//, 'research notes outside the repository'],
  [/\bDESIGN\.md\b/, 'a design file outside the repository (cite docs/design.md)'],
  [/\bprotocol\s+brief\b/i, 'a brief outside the repository (cite docs/protocol.md)'],
  [/\bbrief\s*§/i, 'a brief outside the repository (cite docs/protocol.md)'],
];

function checkFile(file: string): Checked {
  const text = referenceText(file);
  const broken: Finding[] = [];
  const references = noReferences();
  // This file's own comments hold examples of every pattern.
  if (text === undefined || file === 'scripts/doc-links.test.ts') return { references, broken };
  const report = (problem: string) => broken.push({ file, problem });
  const isProse = PROSE.has(extname(file));
  const flat = folded(text);

  for (const [pattern, what] of OUTSIDE) {
    const match = pattern.exec(readRepo(file));
    if (match) report(`${what}: "${match[0]}"`);
  }

  for (const match of flat.matchAll(LINE_NUMBER)) {
    report(`${match[0]}: cite a heading or a name, not a line number`);
  }

  for (const match of flat.matchAll(MARKDOWN_LINK)) {
    const target = match[1]!;
    if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
    references.link += 1;
    const [path, anchor] = target.split('#') as [string, string | undefined];
    const resolved = path === '' ? file : join(dirname(file), path);
    if (!fileSet.has(resolved) && !folders.has(resolved.replace(/\/$/, ''))) {
      report(`link ${target}: no such file`);
    } else if (
      anchor !== undefined &&
      extname(resolved) === '.md' &&
      !anchorsOf(readRepo(resolved)).has(anchor)
    ) {
      report(`link ${target}: no heading with that anchor in ${resolved}`);
    }
  }

  for (const match of flat.matchAll(CITATION)) {
    const cited = resolve(file, match[1]!) ?? match[1]!;
    const names = [...match[2]!.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
    references.citation += names.length;
    if (!fileSet.has(cited)) {
      report(`${match[1]} ${match[2]}: no such file`);
      continue;
    }
    const known = extname(cited) === '.md' ? citableNames(readRepo(cited)) : yamlKeys(readRepo(cited));
    for (const name of names) if (!known.has(name)) report(`${cited} "${name}": no such heading`);
  }

  // Paths and file names: in prose only inside `code` and links (plain words like "and/or" are not paths).
  const pathText = isProse
    ? [...text.matchAll(/`([^`\n]+)`|\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? m[2]).join('\n')
    : text;
  for (const match of pathText.matchAll(PATH)) {
    const path = match[0].replace(/[.,:;]+$/, '');
    if (/[*{}<>…]|\.\.\.$/.test(path) || path === '') continue;
    references.path += 1;
    if (resolve(file, path) === undefined) report(`path ${path}: no such file or folder`);
  }
  for (const match of pathText.matchAll(BARE_NAME)) {
    references['file name'] += 1;
    if (!basenames.has(match[0])) report(`file name ${match[0]}: no file of that name`);
  }
  return { references, broken };
}

/** The keys of a YAML file (its names at any depth), for citations of schemas in docs/asyncapi.yaml. */
function yamlKeys(yaml: string): Set<string> {
  return new Set([...yaml.matchAll(/^\s*([\w-]+):/gm)].map((m) => m[1]!));
}

function checkAll(): Checked {
  const all: Checked = { references: noReferences(), broken: [] };
  for (const file of files) {
    const { references, broken } = checkFile(file);
    for (const kind of Object.keys(references) as Kind[]) all.references[kind] += references[kind];
    all.broken.push(...broken);
  }
  return all;
}

describe('references in docs and comments', () => {
  test('the comment scanner finds comments and only comments', () => {
    const source = [
      "const url = 'https://example.test/a'; // one",
      'const re = /\\/\\/ not a comment/; /* two */',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the scanner reads this as source text.
      'const t = `${a /* three */} // not one`;',
      'const d = a / b; // four',
    ].join('\n');
    assert.deepEqual(
      commentsOf(source)
        .split('\n')
        .map((c) => c.trim()),
      ['one', 'two', 'three', 'four'],
    );
  });

  test('every reference resolves inside the repository', (t) => {
    const { references, broken } = checkAll();
    t.diagnostic(`${files.length} files: ${JSON.stringify(references)}`);
    // Far fewer would mean a pattern no longer finds its references (and the test would pass vacuously).
    const least = { link: 40, citation: 80, path: 200, 'file name': 30 };
    for (const kind of Object.keys(least) as Kind[])
      assert.ok(references[kind] >= least[kind], `found only ${references[kind]} ${kind} references`);
    assert.deepEqual(
      broken.map((b) => `${relative('.', b.file)}: ${b.problem}`),
      [],
    );
  });

  test('the citations of docs/protocol.md are found (wrapped and listed ones too)', () => {
    const cited = files
      .filter((f) => f.startsWith('packages/realtime/'))
      .flatMap((f) => [...folded(referenceText(f) ?? '').matchAll(CITATION)])
      .filter((m) => m[1] === 'docs/protocol.md');
    assert.ok(
      cited.length > 40,
      `found only ${cited.length} citations of docs/protocol.md in packages/realtime`,
    );
  });
});
