import { readFileSync } from 'node:fs';

/**
 * Who made a name, a folder or a process the kit leaves on shared servers and on this machine:
 * the pid of the process that made it, in fixed-width hex. A later run (of this worktree or any
 * other on the machine) removes what it finds of owners that are gone (leftovers.ts), and never
 * what a live process, such as a jest running next to it, still uses.
 */
const PID_HEX = 8;

export function ownerTag(pid = process.pid): string {
  return pid.toString(16).padStart(PID_HEX, '0');
}

/** Whether the process exists and is not a zombie (a killed orphan may wait to be reaped). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // no /proc (macOS): the signal said it exists
  }
}

/** What a kit-made name says of its making: when (ms since the epoch) and, when recorded, by whom. */
export interface NameOrigin {
  createdAt: number;
  ownerPid?: number;
}

const TIME_HEX = 11; // Date.now() in hex, until the year 2527
const RANDOM_HEX = 6;
const OWNED_TAIL = new RegExp(`_([0-9a-f]{${TIME_HEX}})([0-9a-f]{${PID_HEX}})?[0-9a-f]{${RANDOM_HEX}}$`);
/** Names the kit made before they carried their owner: judged by their age alone. */
const EARLIEST = Date.UTC(2024, 0, 1);

/**
 * The origin of a name uniqueName made (`<prefix>_<time><owner><random>`, all hex after the last
 * underscore), or undefined for any other name: those the kit never touches.
 */
export function nameOrigin(name: string): NameOrigin | undefined {
  const match = OWNED_TAIL.exec(name);
  if (!match || !/^[a-z0-9_]+$/.test(name.slice(0, match.index))) return undefined;
  const createdAt = parseInt(match[1]!, 16);
  if (createdAt < EARLIEST) return undefined;
  return match[2] ? { createdAt, ownerPid: parseInt(match[2], 16) } : { createdAt };
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Whether what carries this origin is a leftover of an earlier run: its owner is gone (and it is
 * a few minutes old, so that nothing a process just handed on is taken), or, without a recorded
 * owner, it is hours old, longer than any run. Past a day anything is (a reused pid keeps it no longer).
 */
export function isLeftover(origin: NameOrigin, now = Date.now(), alive = isAlive): boolean {
  const age = now - origin.createdAt;
  if (origin.ownerPid === undefined) return age > 6 * HOUR;
  return age > 24 * HOUR || (age > 5 * MINUTE && !alive(origin.ownerPid));
}
