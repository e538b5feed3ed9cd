import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { infraCpuMs } from '../pipeline/figures';
import { cpuMs } from './measure';

/**
 * Where a call's CPU goes: the llm-gateway, the bench's own process (the driver publishing
 * requests and reading results), and the local servers (FerretDB, PostgreSQL, RabbitMQ), each
 * read from /proc before and after a measurement. The servers are the machine's, shared with
 * anything else running: their figures are an upper bound on what the calls cost them.
 */
export class CpuShares {
  private readonly gateway: number;
  private readonly self = process.cpuUsage();
  private readonly infra = infraCpuMs();

  constructor(private readonly gatewayPid: number | undefined) {
    this.gateway = cpuMs(gatewayPid);
  }

  /** CPU ms per call by process since construction, over `calls` calls. */
  perCall(calls: number): Record<string, number> {
    const self = process.cpuUsage(this.self);
    const shares: Record<string, number> = {
      'llm-gateway': (cpuMs(this.gatewayPid) - this.gateway) / calls,
      bench: (self.user + self.system) / 1000 / calls,
    };
    for (const [pid, { name, ms }] of infraCpuMs()) {
      const spent = ms - (this.infra.get(pid)?.ms ?? 0);
      if (Number.isFinite(spent)) shares[name] = (shares[name] ?? 0) + spent / calls;
    }
    return shares;
  }
}

/** The shares as one line, the servers and the llm-gateway summed as `total` (the bench left out). */
export function sharesLine(shares: Record<string, number>): string {
  const total = Object.entries(shares)
    .filter(([name]) => name !== 'bench')
    .reduce((sum, [, ms]) => sum + ms, 0);
  return [
    ...Object.entries(shares).map(([name, ms]) => `${name} ${ms.toFixed(2)}`),
    `total ${total.toFixed(2)}`,
  ].join(', ');
}

/** What a script belongs to: its package under node_modules, our workspace folder, or node itself. */
function packageOf(url: string): string {
  if (!url) return '(native, GC, idle-less runtime)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules)/.exec(url);
  if (modules) return modules[1]!;
  const workspace = /\/(packages|services)\/([^/]+)\//.exec(url);
  if (workspace) return `${workspace[1]}/${workspace[2]}`;
  return url.startsWith('node:') || !url.includes('/') ? 'node' : path.basename(url);
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

/**
 * The functions with the most self time in the newest V8 CPU profile of `dir` (`--cpu-prof`),
 * as "share  ms  function (file:line)" lines.
 */
export function topSelfTime(dir: string, top = 25): string {
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.cpuprofile'))
    .map((file) => path.join(dir, file));
  const newest = files.sort().at(-1);
  if (!newest) return `no .cpuprofile in ${dir}\n`;
  const profile = JSON.parse(readFileSync(newest, 'utf8')) as {
    nodes: ProfileNode[];
    startTime: number;
    endTime: number;
    samples: number[];
  };
  const msPerSample = (profile.endTime - profile.startTime) / 1000 / Math.max(1, profile.samples.length);
  const hits = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let all = 0;
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || !node.hitCount) continue;
    const key = `${functionName || '(anonymous)'} (${path.basename(url) || '-'}:${lineNumber + 1})`;
    hits.set(key, (hits.get(key) ?? 0) + node.hitCount);
    byPackage.set(packageOf(url), (byPackage.get(packageOf(url)) ?? 0) + node.hitCount);
    all += node.hitCount;
  }
  const lines = (counts: Map<string, number>, n: number) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(
        ([name, hit]) =>
          `  ${((100 * hit) / all).toFixed(1).padStart(5)} %  ${(hit * msPerSample).toFixed(0).padStart(6)} ms  ${name}`,
      )
      .join('\n');
  return (
    `${path.basename(newest)}: ${(all * msPerSample).toFixed(0)} ms busy; self time by package:\n${lines(byPackage, 12)}\n` +
    `by function (PACK_RUNTIME=source names the sources' functions; the bundle's are minified):\n${lines(hits, top)}\n`
  );
}
