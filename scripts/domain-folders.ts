/**
 * The folder graph of a service's `src/domain`: which top-level folders import which,
 * the folder tangles (groups of folders that reach each other, two or more), and the files per
 * top level. A measurement for the notes; the CI check of folder cycles is dependency-cruiser's.
 *
 *   node --require tsx/cjs scripts/domain-folders.ts services/pipeline-orchestrator/src/domain
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const IMPORT = /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/g;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return files(full);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [full] : [];
  });
}

/** The top level of `file` under `root`: its folder, or the file itself at the root. */
const topOf = (root: string, file: string) => path.relative(root, file).split(path.sep)[0]!;

export function folderGraph(root: string) {
  const edges = new Map<string, Set<string>>();
  const counts = new Map<string, number>();
  for (const file of files(root)) {
    const from = topOf(root, file);
    counts.set(from, (counts.get(from) ?? 0) + 1);
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = path.resolve(path.dirname(file), spec!);
      if (path.relative(root, target).startsWith('..')) continue;
      const to = topOf(root, `${target}.ts`).replace(/\.ts\.ts$/, '.ts');
      if (to === from) continue;
      edges.set(from, (edges.get(from) ?? new Set()).add(to));
    }
  }
  return { edges, counts, tangles: tangles(edges) };
}

/** Strongly connected groups of two or more folders (Tarjan). */
function tangles(edges: Map<string, Set<string>>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    order.set(node, index);
    low.set(node, index++);
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, order.get(next)!));
    }
    if (low.get(node) === order.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        group.push(member);
      } while (member !== node);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const node of edges.keys()) if (!order.has(node)) visit(node);
  return found;
}

if (require.main === module) {
  const root = path.resolve(process.argv[2] ?? 'src/domain');
  const { edges, counts, tangles: found } = folderGraph(root);
  const mutual = [...edges].flatMap(([from, tos]) =>
    [...tos].filter((to) => from < to && edges.get(to)?.has(from)).map((to) => `${from} <-> ${to}`),
  );
  process.stdout.write(`files per top level: ${JSON.stringify(Object.fromEntries([...counts].sort()))}\n`);
  for (const [from, tos] of [...edges].sort())
    process.stdout.write(`${from} -> ${[...tos].sort().join(', ')}\n`);
  process.stdout.write(`folders importing each other: ${mutual.length ? mutual.join('; ') : 'none'}\n`);
  process.stdout.write(
    `tangles: ${found.length ? found.map((group) => group.join(' ~ ')).join('; ') : 'none'}\n`,
  );
  process.exitCode = found.length > 0 ? 1 : 0;
}
