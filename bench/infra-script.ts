import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** Runs `scripts/infra.sh <args>` (progress to this process's stderr) and returns what it printed. */
export function infra(...args: string[]): string {
  return execFileSync('bash', [path.resolve(__dirname, '../scripts/infra.sh'), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** The value of an `export NAME='...'` line that scripts/infra.sh printed. */
export function exported(output: string, name: string): string {
  const value = new RegExp(`^export ${name}='([^']*)'`, 'm').exec(output)?.[1];
  if (value === undefined) throw new Error(`scripts/infra.sh printed no ${name}`);
  return value;
}
