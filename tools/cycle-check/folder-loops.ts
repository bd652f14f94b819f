// Folder loops. The repository is read as nested rooms: inside each folder, its entries — each subfolder, taken whole
// with everything under it, and each file of its own — are the rooms, and an import from a file under entry A to a
// file under entry B of the same folder is an arrow A → B there. Every import is an arrow in exactly one folder: the
// nearest folder holding both files (`packages/server/src/webchat/routes/sdk.routes.ts` importing
// `packages/server/src/webchat/messages/send-message.ts` is the arrow routes/ → messages/ inside webchat/, and
// nothing at the level of packages/server/src). A loop is a set of entries of one folder that reach each other
// through these arrows (a strongly connected component); the rule is that no folder has one, at any depth, so every
// folder can be read from the top down: no arrow runs back up.
//
// Test files (`*.test.ts`) are left out: a test reaches what it tests, wherever that is, and nothing imports it.
// Test support (`testing/` folders) is code like any other here: a `testing/` folder inside a capability that builds
// on the whole server makes that capability reach the server's root and back, which is the tangle this check exists
// to show (the layers file states, in addition, that production code never imports test support).
import { isTestFile, type SourceImport } from './imports.ts';

/** A→B inside one folder, with the import statements that make it. */
export interface Arrow {
  from: string;
  to: string;
  imports: SourceImport[];
}

export interface FolderLoop {
  /** The folder whose entries loop, relative to the repository (`.` for the repository itself). */
  folder: string;
  /** Its entries in the loop: a subfolder by its name and a slash (`routes/`), a file by its name. */
  entries: string[];
  /** One shortest way round, first entry repeated at the end. */
  shortest: string[];
  /** Every arrow between two entries of the loop. */
  arrows: Arrow[];
}

/** Where one import is an arrow: the nearest folder holding both files, and the entry of it each file is under. */
export function arrowOf(from: string, to: string): { folder: string; from: string; to: string } {
  const a = from.split('/');
  const b = to.split('/');
  let common = 0;
  while (common < a.length - 1 && common < b.length - 1 && a[common] === b[common]) common += 1;
  const entry = (parts: string[]) => (parts.length - common > 1 ? `${parts[common]}/` : parts[common]);
  return { folder: common === 0 ? '.' : a.slice(0, common).join('/'), from: entry(a), to: entry(b) };
}

export function findFolderLoops(imports: SourceImport[]): FolderLoop[] {
  const folders = new Map<string, Map<string, Map<string, SourceImport[]>>>();
  for (const found of imports) {
    if (isTestFile(found.from) || isTestFile(found.to) || found.from === found.to) continue;
    const arrow = arrowOf(found.from, found.to);
    const arrows = getOrAdd(folders, arrow.folder, () => new Map<string, Map<string, SourceImport[]>>());
    getOrAdd(
      getOrAdd(arrows, arrow.from, () => new Map<string, SourceImport[]>()),
      arrow.to,
      () => [],
    ).push(found);
  }
  const loops: FolderLoop[] = [];
  for (const folder of [...folders.keys()].sort()) {
    const arrows = folders.get(folder)!;
    const next = (entry: string) => [...(arrows.get(entry)?.keys() ?? [])].sort();
    for (const entries of stronglyConnected([...arrows.keys()].sort(), next)) {
      if (entries.length < 2) continue;
      const inLoop = new Set(entries);
      const loopArrows: Arrow[] = [];
      for (const from of entries) {
        for (const to of next(from).filter((entry) => inLoop.has(entry))) {
          loopArrows.push({ from, to, imports: sortImports(arrows.get(from)!.get(to)!) });
        }
      }
      loops.push({
        folder,
        entries,
        shortest: shortestCycle(entries, (e) => next(e).filter((x) => inLoop.has(x))),
        arrows: loopArrows,
      });
    }
  }
  return loops;
}

/** Tarjan's algorithm; each component's entries sorted, components in order of their first entry. */
function stronglyConnected(nodes: string[], next: (node: string) => string[]): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const other of next(node)) {
      if (!index.has(other)) {
        connect(other);
        low.set(node, Math.min(low.get(node)!, low.get(other)!));
      } else if (onStack.has(other)) {
        low.set(node, Math.min(low.get(node)!, index.get(other)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      components.push(component.sort());
    }
  };
  for (const node of nodes) if (!index.has(node)) connect(node);
  return components.sort((a, b) => a[0].localeCompare(b[0]));
}

/** The shortest way round the loop (breadth first from each entry; the first found in entry order wins a tie). */
function shortestCycle(entries: string[], next: (entry: string) => string[]): string[] {
  let best: string[] | undefined;
  for (const start of entries) {
    const cameFrom = new Map<string, string>();
    const queue = [start];
    search: while (queue.length > 0) {
      const entry = queue.shift()!;
      for (const other of next(entry)) {
        if (other === start) {
          const path = [start];
          for (let at = entry; at !== start; at = cameFrom.get(at)!) path.splice(1, 0, at);
          if (best === undefined || path.length + 1 < best.length) best = [...path, start];
          break search;
        }
        if (!cameFrom.has(other)) {
          cameFrom.set(other, entry);
          queue.push(other);
        }
      }
    }
  }
  return best!;
}

function sortImports(imports: SourceImport[]): SourceImport[] {
  return [...imports].sort((a, b) => a.from.localeCompare(b.from) || a.line - b.line);
}

function getOrAdd<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
