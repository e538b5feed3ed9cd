/**
 * Where `pnpm start` tells local tools (`pnpm demo`) which stack it runs: the gateway's URL (its
 * port may have been moved with GATEWAY_PORT) and the admin token the gateway was given. One JSON
 * file, mode 0600 like .local/dev.env, since it holds that token.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface LocalStack {
  /** The gateway's base URL, e.g. http://127.0.0.1:8080. */
  gateway: string;
  /** The admin token the gateway registered at start; absent when none was given. */
  adminToken?: string;
  /** The `pnpm start` process: a file whose process is gone describes no running stack. */
  pid: number;
}

const REPO = path.resolve(__dirname, '../..');

/** PACK_STACK_FILE, else .local/stack.json of this checkout. */
export function stackFile(env: NodeJS.ProcessEnv): string {
  return env.PACK_STACK_FILE || path.join(REPO, '.local/stack.json');
}

export function writeLocalStack(file: string, stack: LocalStack): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(stack, null, 2)}\n`, { mode: 0o600 });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The stack a running `pnpm start` described; undefined when there is none (or it has stopped). */
export function readLocalStack(file: string): LocalStack | undefined {
  if (!existsSync(file)) return undefined;
  let stack: Partial<LocalStack>;
  try {
    stack = JSON.parse(readFileSync(file, 'utf8')) as Partial<LocalStack>;
  } catch {
    return undefined;
  }
  if (typeof stack.gateway !== 'string' || typeof stack.pid !== 'number' || !alive(stack.pid))
    return undefined;
  return {
    gateway: stack.gateway,
    pid: stack.pid,
    ...(stack.adminToken ? { adminToken: stack.adminToken } : {}),
  };
}

/** Removes the file if it still describes `pid`'s stack (a newer start may have replaced it). */
export function removeLocalStack(file: string, pid: number): void {
  try {
    const stack = JSON.parse(readFileSync(file, 'utf8')) as Partial<LocalStack>;
    if (stack.pid === pid) rmSync(file, { force: true });
  } catch {
    // Nothing to remove.
  }
}
