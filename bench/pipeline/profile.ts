import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import path from 'node:path';

/**
 * `pnpm bench:pipeline --profile`: each service runs with V8's sampling profiler (`--cpu-prof`,
 * written when it exits) and the bench prints the functions with the most self time while it was
 * measured (samples before the first measurement, the start-up, are left out). Positions in a
 * compiled bundle are mapped back to the sources through its source map.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Node's flags for a profiled service: its profile goes into `dir`. */
export function profileFlags(dir: string): string[] {
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

/** The top `count` functions by self time in the profile(s) of `dir`, after `fromMs` of each. */
export function profileSummary(name: string, dir: string, fromMs: number, count = 20): string {
  if (!existsSync(dir)) return `profile of ${name}: none written\n`;
  const files = readdirSync(dir).filter((file) => file.endsWith('.cpuprofile'));
  if (files.length === 0) return `profile of ${name}: none written\n`;
  const selfMs = new Map<string, number>();
  let total = 0;
  const maps = new Map<string, SourceMap | null>();
  for (const file of files) {
    const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    let at = 0;
    profile.samples.forEach((id, i) => {
      const delta = (profile.timeDeltas[i] ?? 0) / 1000;
      at += delta;
      const node = byId.get(id);
      if (!node || at < fromMs || node.callFrame.functionName === '(idle)') return;
      const key = where(node.callFrame, maps);
      selfMs.set(key, (selfMs.get(key) ?? 0) + delta);
      total += delta;
    });
  }
  const top = [...selfMs].sort((a, b) => b[1] - a[1]).slice(0, count);
  const lines = top.map(
    ([key, ms]) =>
      `  ${((100 * ms) / total).toFixed(1).padStart(5)} %  ${ms.toFixed(0).padStart(6)} ms  ${key}`,
  );
  return `profile of ${name}: ${total.toFixed(0)} ms sampled while measured, top ${count} by self time\n${lines.join('\n')}\n`;
}

/** "function (source:line)", through the bundle's source map when there is one. */
function where(frame: ProfileNode['callFrame'], maps: Map<string, SourceMap | null>): string {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return name;
  const file = frame.url.startsWith('file://') ? new URL(frame.url).pathname : frame.url;
  if (!maps.has(file)) maps.set(file, loadMap(file));
  const map = maps.get(file);
  const found = map?.findEntry(frame.lineNumber, frame.columnNumber);
  const entry = found && 'originalSource' in found ? found : undefined;
  if (entry?.originalSource)
    return `${name} (${shortPath(entry.originalSource)}:${(entry.originalLine ?? 0) + 1})`;
  return `${name} (${shortPath(file)}:${frame.lineNumber + 1})`;
}

function loadMap(file: string): SourceMap | null {
  try {
    return existsSync(`${file}.map`)
      ? new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as SourceMapPayload)
      : null;
  } catch {
    return null;
  }
}

/** A path from the package or service folder on (node_modules' .pnpm prefix left out). */
function shortPath(file: string): string {
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) return file.slice(modules + 'node_modules/'.length);
  const match = /(?:services|packages)\/.*$/.exec(file);
  return match ? match[0] : path.basename(file);
}
