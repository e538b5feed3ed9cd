/**
 * A V8 CPU profile (`node --cpu-prof`) summed by self time: the functions, and the packages or
 * source folders they come from. A compiled service is one bundle, so each function's place is
 * read back through the bundle's source map (node:module's SourceMap).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface Profile {
  nodes: { id: number; callFrame: CallFrame }[];
  samples: number[];
  timeDeltas: number[];
}

/** The newest .cpuprofile in `dir`, or undefined. */
export function newestProfile(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .sort();
  return files.length ? path.join(dir, files[files.length - 1]!) : undefined;
}

/** Where a profiled function comes from: `where` (file:line) and `area` (package or folder). */
function placer(): (frame: CallFrame) => { where: string; area: string } {
  const maps = new Map<string, SourceMap | null>();
  const mapOf = (file: string) => {
    if (!maps.has(file)) {
      const mapFile = `${file}.map`;
      maps.set(
        file,
        existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8')) as never) : null,
      );
    }
    return maps.get(file)!;
  };
  return (frame) => {
    if (!frame.url) return { where: '', area: frame.functionName || '(anonymous)' };
    if (frame.url.startsWith('node:')) return { where: `${frame.url}:${frame.lineNumber + 1}`, area: 'node' };
    const file = frame.url.startsWith('file:') ? fileURLToPath(frame.url) : frame.url;
    const entry = mapOf(file)?.findEntry(frame.lineNumber, frame.columnNumber) as
      { originalSource?: string; originalLine?: number } | undefined;
    const source = entry?.originalSource ?? file;
    const line = (entry?.originalSource ? entry.originalLine! : frame.lineNumber) + 1;
    return { where: `${shortPath(source)}:${line}`, area: areaOf(source) };
  };
}

/** node_modules/.pnpm/x@1/node_modules/x/lib/a.js -> x/lib/a.js; a workspace file from its top folder. */
function shortPath(source: string): string {
  const plain = source.replace(/^file:\/\//, '');
  const inModules = plain.lastIndexOf('node_modules/');
  if (inModules >= 0) return plain.slice(inModules + 'node_modules/'.length);
  const workspace = /(?:^|\/)((?:packages|services|bench|scripts)\/.*)$/.exec(plain);
  return workspace ? workspace[1]! : plain;
}

function areaOf(source: string): string {
  const short = shortPath(source);
  if (source.includes('node_modules/')) {
    const parts = short.split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const workspace = /^(packages|services)\/([^/]+)/.exec(short);
  return workspace ? `${workspace[1]}/${workspace[2]}` : short;
}

/** The top `top` functions and areas by self time, as printable lines. */
export function summarizeProfile(file: string, top = 25): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const selfUs = new Map<number, number>();
  let totalUs = 0;
  // timeDeltas[i + 1] is the time from sample i to the next: sample i's function ran meanwhile.
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i + 1] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + us);
    totalUs += us;
  });
  const place = placer();
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = frames.get(id)!;
    const { where, area } = place(frame);
    const key = `${frame.functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    byArea.set(area, (byArea.get(area) ?? 0) + us);
  }
  const busyUs = totalUs - (byArea.get('(idle)') ?? 0);
  const rows = (counts: Map<string, number>) =>
    [...counts]
      .filter(([name]) => name !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([name, us]) =>
          `  ${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / busyUs).toFixed(1).padStart(5)}%  ${name}`,
      );
  return [
    `profile ${file}: ${(busyUs / 1000).toFixed(0)} ms busy of ${(totalUs / 1000).toFixed(0)} ms sampled`,
    `self time by package or folder:`,
    ...rows(byArea).slice(0, 15),
    `self time by function (top ${top}):`,
    ...rows(byFunction),
  ].join('\n');
}
