import { spawnSync } from 'node:child_process';
import { isAlive } from '../owner';
import { ipQuiet } from './commands';
import { LINK_PREFIX, NAMESPACE_PREFIX, ownerOfName } from './names';

export interface RemovedNetworks {
  namespaces: string[];
  links: string[];
  processes: number[];
}

/** The partition harness's namespaces on this machine (none where `ip` is missing). */
export function ownedNamespaces(): string[] {
  return ipQuiet('netns', 'list')
    .split('\n')
    .map((line) => line.trim().split(' ')[0]!)
    .filter((name) => name.startsWith(NAMESPACE_PREFIX));
}

/** The partition harness's links in the root namespace. */
export function ownedLinks(): string[] {
  return ipQuiet('-o', 'link', 'show')
    .split('\n')
    .map((line) => /^\d+: ([^:@]+)/.exec(line)?.[1] ?? '')
    .filter((name) => name.startsWith(LINK_PREFIX));
}

/** Kills every process in a namespace (SIGKILL: it is being removed) and removes it. */
export function removeNamespace(namespace: string): number[] {
  const pids = ipQuiet('netns', 'pids', namespace)
    .split('\n')
    .map(Number)
    .filter((pid) => pid > 0);
  for (const pid of pids)
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  ipQuiet('netns', 'del', namespace);
  return pids;
}

export function removeLink(link: string): void {
  ipQuiet('link', 'del', link);
}

/**
 * What killed runs of the partition harness left on this machine: their namespaces (with every
 * process in them) and their links, of owners that are gone; a live run's are kept. Nothing where
 * the process cannot manage namespaces (not root): it could not have made any either.
 */
export function removeLeftoverNetworks(alive: (pid: number) => boolean = isAlive): RemovedNetworks {
  const removed: RemovedNetworks = { namespaces: [], links: [], processes: [] };
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return removed;
  if (spawnSync('ip', ['-V']).error) return removed;
  const gone = (name: string) => {
    const owner = ownerOfName(name);
    return owner !== undefined && !alive(owner);
  };
  for (const namespace of ownedNamespaces().filter(gone)) {
    removed.processes.push(...removeNamespace(namespace));
    removed.namespaces.push(namespace);
  }
  for (const link of ownedLinks().filter(gone)) {
    removeLink(link);
    removed.links.push(link);
  }
  return removed;
}
