import type { ChildProcess } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isAlive, isLeftover, ownerTag } from './owner';

/**
 * The kit's leftovers on this machine: processes it started and folders it made. Both carry the
 * pid of the process that made them (owner.ts), so a later run removes those whose owner is gone.
 */

/** Where the kit records the processes it starts: one file per process, `<pid>.json`. */
export const processRecordsDir = (tmp = os.tmpdir()) => path.join(tmp, 'pack-test-processes');

interface ProcessRecord {
  pid: number;
  owner: number;
  /** The start of its command line, so that a pid the system gave to another process since is left alone. */
  command: string;
}

const COMMAND_CHARS = 200;

const commandLine = (pid: number): string | undefined => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return undefined;
  }
};

/** Records a process the kit started until it ends; a run killed meanwhile leaves the record behind. */
export function recordProcess(child: ChildProcess, dir = processRecordsDir(), owner = process.pid): void {
  const pid = child.pid;
  if (pid === undefined) return;
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${pid}.json`);
  const command = child.spawnargs.join(' ').slice(0, COMMAND_CHARS);
  const record: ProcessRecord = { pid, owner, command };
  writeFileSync(file, JSON.stringify(record));
  child.once('exit', () => rmSync(file, { force: true }));
}

/** Kills the recorded processes whose owner is gone, and forgets the records of ended ones: the pids killed. */
export function removeStrayProcesses(dir = processRecordsDir(), alive = isAlive): number[] {
  const killed: number[] = [];
  let files: string[];
  try {
    files = readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch {
    return killed;
  }
  for (const name of files) {
    const file = path.join(dir, name);
    let record: ProcessRecord;
    try {
      record = JSON.parse(readFileSync(file, 'utf8')) as ProcessRecord;
    } catch {
      continue; // being written by its owner
    }
    if (alive(record.owner)) continue;
    const running = commandLine(record.pid);
    if (alive(record.pid) && running?.slice(0, COMMAND_CHARS) === record.command) {
      process.kill(record.pid, 'SIGKILL');
      killed.push(record.pid);
    }
    unlinkSync(file);
  }
  return killed;
}

const OWNED_DIR = /^pack-test-[a-z0-9-]+?-([0-9a-f]{8})-/;
/** Folders tests made before they carried their owner, removed once hours old. */
const UNOWNED_DIRS = [
  'pack-leak-scan-',
  'pack-prometheus-',
  'pack-slapd-',
  'pack-trace-viewer-',
  'pack-trace-cache-',
  'pack-schemathesis-',
  'pack-backup-',
  'pack-demo-stack-',
  'e2e-memory-',
  'console-chromium-',
  'net-guard-tls-',
];

/** A fresh folder in the system's temporary one, named with its owner so that a later run can remove it. */
export function ownedTempDir(purpose: string, tmp = os.tmpdir(), owner = process.pid): string {
  return mkdtempSync(path.join(tmp, `pack-test-${purpose}-${ownerTag(owner)}-`));
}

/** Removes the kit's folders whose owner is gone (or, made before owners were recorded, hours old). */
export function removeLeftoverDirs(tmp = os.tmpdir(), now = Date.now(), alive = isAlive): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(tmp)) {
    const full = path.join(tmp, name);
    const owned = OWNED_DIR.exec(name);
    let createdAt: number;
    try {
      createdAt = statSync(full).mtimeMs;
    } catch {
      continue;
    }
    const origin = owned
      ? { createdAt, ownerPid: parseInt(owned[1]!, 16) }
      : UNOWNED_DIRS.some((prefix) => name.startsWith(prefix))
        ? { createdAt }
        : undefined;
    if (!origin || !isLeftover(origin, now, alive)) continue;
    rmSync(full, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
