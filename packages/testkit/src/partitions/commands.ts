import { spawnSync } from 'node:child_process';

/**
 * iproute2 (`ip`, `tc`) run synchronously: a step of the partition harness either works or
 * fails the test with what the tool said.
 */
export function run(command: string, args: string[], { ignore = false } = {}): string {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 10_000 });
  if (!ignore && (result.error || result.status !== 0))
    throw new Error(
      `${command} ${args.join(' ')} failed: ${result.error?.message ?? result.stderr.trim() ?? result.status}`,
    );
  return result.stdout ?? '';
}

export const ip = (...args: string[]) => run('ip', args);
export const ipQuiet = (...args: string[]) => run('ip', args, { ignore: true });
export const tc = (...args: string[]) => run('tc', args);

/**
 * Why this process cannot make network namespaces, or undefined when it can. The partition
 * tests fail with this (never skip): a run that cannot make them has not tested partitions.
 */
export function namespacesUnavailable(): string | undefined {
  const how =
    'The partition tests need root and iproute2 (`ip`, `tc`), as CI has: run them as root, e.g. `sudo -E npx jest test/partitions`.';
  if (process.platform !== 'linux')
    return `network namespaces are Linux only (this is ${process.platform}). ${how}`;
  if (process.getuid?.() !== 0) return `this process is not root (uid ${process.getuid?.()}). ${how}`;
  for (const tool of ['ip', 'tc']) {
    const found = spawnSync(tool, ['-V'], { encoding: 'utf8' });
    if (found.error) return `\`${tool}\` is not installed (Debian: apt-get install iproute2). ${how}`;
  }
  return undefined;
}

/**
 * `dev` (in the namespace `prefix` names, or the root's) drops `percent` of the packets it sends:
 * a random classic-BPF match redirects them to `sink`, a link that is never up. This machine's
 * kernel has no netem, which would do it in one rule.
 */
export function loseOnLink(prefix: string[], dev: string, sink: string, percent: number): void {
  const threshold = Math.min(2 ** 32 - 1, Math.floor((percent / 100) * 2 ** 32));
  // ld rand; A >= threshold: pass (0), else: match (the redirect to a link that is down drops it).
  const bytecode = `4,32 0 0 4294963256,53 1 0 ${threshold},6 0 0 4294967295,6 0 0 0`;
  tc(...prefix, 'qdisc', 'replace', 'dev', dev, 'root', 'handle', '1:', 'htb');
  const redirect = ['action', 'mirred', 'egress', 'redirect', 'dev', sink];
  tc(...prefix, 'filter', 'add', 'dev', dev, 'parent', '1:', 'bpf', 'bytecode', bytecode, ...redirect);
}
