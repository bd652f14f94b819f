// Every import of the repository's own sources, read with the TypeScript 5 compiler API (the parser and the module
// resolver, the same that madge uses here) and resolved the way `tsc` resolves them: type imports count as much as
// run-time ones, because a folder that needs another folder's types depends on it just the same.
//
// Read are `import … from`, `import type …`, `import { type A } …`, `export … from`, `import x = require(…)`, an
// `import('…')` call with a literal argument and an `import('…')` type. Not read: a call whose module is computed
// (`import(name)`), `require()` and JSDoc `{import('…')}` in JavaScript.
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import ts from 'typescript';

/** Where the sources are, relative to the repository: each workspace package's sources and `bin`, and the tools. */
export const SOURCE_ROOTS = ['packages/*/src', 'packages/*/bin', 'bench', 'faults', 'scripts', 'tools'];

const EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'data', 'test-artifacts']);

/** One import statement: `from` takes `names` from `to` (paths relative to the repository, `/`-separated). */
export interface SourceImport {
  from: string;
  to: string;
  /** 1-based line of the statement in `from`. */
  line: number;
  /** As a reader would say them: `A`, `type B`, `default`, `*`, `import()`, or `(side effects)`. */
  names: string[];
}

export interface ReadResult {
  /** Every source file found, relative to the repository. */
  files: string[];
  imports: SourceImport[];
  /** Relative specifiers that resolve to no file: an arrow the check cannot draw, so it refuses to guess. */
  unresolved: string[];
  /**
   * `import { type A, type B } from '…'` (or `export { type A } from`), as `file:line: specifier`: every name is a
   * type, yet with `verbatimModuleSyntax` the module is still loaded at run time (`import {} from '…'`).
   */
  inlineTypesOnly: string[];
}

/** A `*.test.ts` (or `.test.mjs`, …) file: a test, run by `npm test`, imported by nothing. */
export function isTestFile(file: string): boolean {
  return /\.test\.[cm]?[jt]s$/.test(file);
}

export function readImports(repository: string): ReadResult {
  const root = realpath(repository);
  const files = listSources(root);
  const known = new Set(files);
  const options = compilerOptions(root);
  const cache = ts.createModuleResolutionCache(root, (name) => name, options);
  const imports: SourceImport[] = [];
  const unresolved: string[] = [];
  const inlineTypesOnly: string[] = [];
  for (const file of files) {
    const path = join(root, file);
    for (const found of importsOf(path, readFileSync(path, 'utf8'))) {
      if (found.inlineTypesOnly) inlineTypesOnly.push(`${file}:${found.line}: '${found.specifier}'`);
      const resolved = ts.resolveModuleName(found.specifier, path, options, ts.sys, cache).resolvedModule;
      const target = resolved ? posix(relative(root, realpath(resolved.resolvedFileName))) : undefined;
      if (target !== undefined && known.has(target)) {
        imports.push({ from: file, to: target, line: found.line, names: found.names });
      } else if (isRelativeSource(found.specifier) && (target === undefined || target.startsWith('..'))) {
        unresolved.push(`${file}:${found.line}: '${found.specifier}'`);
      }
    }
  }
  return { files, imports, unresolved, inlineTypesOnly };
}

/** A relative specifier of a source file (not of a stylesheet, which the bundler reads). */
function isRelativeSource(specifier: string): boolean {
  const ext = extname(specifier);
  return specifier.startsWith('.') && (ext === '' || EXTENSIONS.has(ext));
}

function listSources(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(root, dir)).sort()) {
      if (name.startsWith('.') || SKIPPED_FOLDERS.has(name)) continue;
      const path = dir === '' ? name : `${dir}/${name}`;
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (EXTENSIONS.has(extname(name)) && !name.endsWith('.d.ts')) out.push(path);
    }
  };
  for (const pattern of SOURCE_ROOTS) {
    const [first, star, rest] = pattern.split('/');
    if (star === '*') {
      const parent = join(root, first);
      if (!isDirectory(parent)) continue;
      for (const name of readdirSync(parent).sort()) {
        if (isDirectory(join(parent, name, rest))) walk(`${first}/${name}/${rest}`);
      }
    } else if (isDirectory(join(root, pattern))) {
      walk(pattern);
    }
  }
  return out;
}

/** The repository's tsconfig.json (its `paths`, its resolution mode), reading JavaScript too. */
function compilerOptions(root: string): ts.CompilerOptions {
  const defaults: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
  };
  const configPath = join(root, 'tsconfig.json');
  const read = ts.readConfigFile(configPath, ts.sys.readFile);
  const options = read.error
    ? defaults
    : ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, configPath).options;
  return { ...options, allowJs: true };
}

interface FoundImport {
  specifier: string;
  line: number;
  names: string[];
  inlineTypesOnly: boolean;
}

/** The imports one file makes, found in its syntax tree. */
export function importsOf(path: string, text: string): FoundImport[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, scriptKind(path));
  const found: FoundImport[] = [];
  const add = (
    node: ts.Node,
    specifier: ts.Node | undefined,
    names: string[],
    inlineTypesOnly = false,
  ): void => {
    if (specifier === undefined || !ts.isStringLiteralLike(specifier)) return;
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push({ specifier: specifier.text, line, names, inlineTypesOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const { names, inlineTypesOnly } = importClauseNames(node.importClause);
      add(node, node.moduleSpecifier, names, inlineTypesOnly);
    } else if (ts.isExportDeclaration(node)) {
      const { names, inlineTypesOnly } = exportClauseNames(node);
      add(node, node.moduleSpecifier, names, inlineTypesOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression, [node.isTypeOnly ? 'type *' : '*']);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0], ['import()']);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const name = node.qualifier ? entityName(node.qualifier) : '*';
      add(node, node.argument.literal, [`type ${name}`]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function importClauseNames(clause: ts.ImportClause | undefined): {
  names: string[];
  inlineTypesOnly: boolean;
} {
  if (clause === undefined) return { names: ['(side effects)'], inlineTypesOnly: false };
  const declaredType = clause.phaseModifier === ts.SyntaxKind.TypeKeyword;
  const names: string[] = [];
  const typed = (name: string, isType: boolean) => (declaredType || isType ? `type ${name}` : name);
  if (clause.name) names.push(typed('default', false));
  const bindings = clause.namedBindings;
  if (bindings && ts.isNamespaceImport(bindings)) names.push(typed('*', false));
  const elements = bindings && ts.isNamedImports(bindings) ? bindings.elements : [];
  for (const element of elements) {
    names.push(typed((element.propertyName ?? element.name).text, element.isTypeOnly));
  }
  const inlineTypesOnly =
    !declaredType &&
    clause.name === undefined &&
    elements.length > 0 &&
    elements.every((element) => element.isTypeOnly);
  return { names, inlineTypesOnly };
}

function exportClauseNames(node: ts.ExportDeclaration): { names: string[]; inlineTypesOnly: boolean } {
  const typed = (name: string, isType: boolean) => (node.isTypeOnly || isType ? `type ${name}` : name);
  const clause = node.exportClause;
  if (clause === undefined || ts.isNamespaceExport(clause)) {
    return { names: [typed('*', false)], inlineTypesOnly: false };
  }
  const names = clause.elements.map((element) =>
    typed((element.propertyName ?? element.name).text, element.isTypeOnly),
  );
  const inlineTypesOnly =
    !node.isTypeOnly && clause.elements.length > 0 && clause.elements.every((element) => element.isTypeOnly);
  return { names, inlineTypesOnly };
}

function entityName(name: ts.EntityName): string {
  return ts.isIdentifier(name) ? name.text : `${entityName(name.left)}.${name.right.text}`;
}

function scriptKind(path: string): ts.ScriptKind {
  return /\.[cm]?js$/.test(path) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function realpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function posix(path: string): string {
  return path.split(sep).join('/');
}
