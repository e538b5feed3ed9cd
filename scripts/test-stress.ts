/**
 * `pnpm test:stress [jest arguments]`: the suite as `pnpm test` runs it (jest, the same
 * configuration), while a competing process keeps one core busy for the whole run. A test that
 * passes only on an idle machine leans on how fast the machine is; this run shows it.
 *
 * The burner is a plain busy loop, pinned to no core: the scheduler shares the machine between it
 * and the suite as it would share it with any other load. It ends with the run, on success,
 * failure, Ctrl-C or SIGTERM, and ends by itself when this script dies without a word (SIGKILL):
 * it checks that its parent still lives.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const REPO = path.resolve(__dirname, '..');

/** Burns one core; every 100 ms of burning it looks whether the script that started it still lives. */
const BURNER = `
const parent = Number(process.argv[1]);
for (;;) {
  const until = Date.now() + 100;
  while (Date.now() < until);
  try { process.kill(parent, 0); } catch { process.exit(0); }
}`;

function startBurner(): ChildProcess {
  return spawn(process.execPath, ['-e', BURNER, String(process.pid)], { stdio: 'ignore' });
}

function runJest(args: string[]): ChildProcess {
  const jest = require.resolve('jest/bin/jest', { paths: [REPO] });
  return spawn(process.execPath, [jest, ...args], { cwd: REPO, stdio: 'inherit' });
}

function main(): void {
  const started = Date.now();
  const burner = startBurner();
  const jest = runJest(process.argv.slice(2));
  const stopBurner = () => {
    if (burner.exitCode === null && burner.signalCode === null) burner.kill('SIGKILL');
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(signal, () => {
      // Ctrl-C reaches jest too (one process group); a SIGTERM sent to this script alone is passed on.
      if (jest.exitCode === null) jest.kill(signal);
      stopBurner();
    });
  jest.on('exit', (code, signal) => {
    stopBurner();
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    const outcome = signal ? `ended by ${signal}` : `exit ${code}`;
    process.stderr.write(`\ntest:stress: ${outcome} after ${seconds} s with one core kept busy\n`);
    process.exitCode = code ?? 1;
  });
}

main();
