/**
 * glibc's allocator as the image sets it (Dockerfile ENV; bench/crash-scenario/runtime.ts
 * PRODUCTION_ENV, which the benches and the memory test use; docs/decisions/0050): what a
 * service frees goes back to the system. Loading a bundle compiles about 5 MB of JavaScript: V8's
 * parser and compilers take their working memory in segments of 32 KB, which below the mmap
 * threshold land on glibc's brk heap, which only shrinks from its top. With a 64 KB threshold 22
 * MB of it stayed resident in every service from its start on, and a compiler thread's arena
 * kept its own (the webhook-dispatcher's 32 MB arena in the soak).
 *
 * Each bundle is loaded as production runs it, without configuration, so it stops at its
 * configuration check right after loading: what is resident then is what loading left behind.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { bundlePath } from '../../scripts/build-services';
import { PRODUCTION_ENV, PRODUCTION_NODE_FLAGS, prepareRuntime } from '../../bench/crash-scenario/runtime';
import { REPO } from './load';
import { CEILINGS } from '@pack/testkit';

/** Replaces process.exit: prints RSS and the brk heap's resident size (MB), then exits. */
const MEASURE = `
const exit = process.exit;
process.exit = (code) => {
  const smaps = require('node:fs').readFileSync('/proc/self/smaps', 'utf8');
  const at = smaps.indexOf('[heap]');
  const brk = at < 0 ? 0 : Number(/Rss:\\s+(\\d+) kB/.exec(smaps.slice(at))[1]) / 1024;
  process.stdout.write('memory ' + JSON.stringify({ rss: process.memoryUsage().rss / 2 ** 20, brk }) + '\\n');
  exit(code);
};
require(process.argv[1]);
`;

function loaded(service: string): { rss: number; brk: number } {
  const run = spawnSync(process.execPath, [...PRODUCTION_NODE_FLAGS, '-e', MEASURE, bundlePath(service)], {
    env: { PATH: process.env.PATH, ...PRODUCTION_ENV },
    encoding: 'utf8',
    timeout: CEILINGS.start,
  });
  const line = run.stdout.split('\n').find((l) => l.startsWith('memory '));
  if (!line) throw new Error(`${service} printed no figures: ${run.stderr.slice(0, 500)}`);
  return JSON.parse(line.slice('memory '.length)) as { rss: number; brk: number };
}

describe("glibc's allocator settings of the image (docs/decisions/0050)", () => {
  beforeAll(() => prepareRuntime('compiled'), 180_000);

  it('are the ones the benches and the memory test run the services with', () => {
    const dockerfile = readFileSync(path.join(REPO, 'Dockerfile'), 'utf8');
    for (const [name, value] of Object.entries(PRODUCTION_ENV))
      expect(dockerfile).toMatch(new RegExp(`^\\s*(ENV\\s+)?${name}=${value}\\b`, 'm'));
  });

  it.each(['settings', 'webhook-dispatcher'])(
    'give back what loading the %s bundle freed: under 10 MB of brk heap and 90 MB resident after it',
    (service) => {
      const { rss, brk } = loaded(service);
      process.stdout.write(`${service}: ${rss.toFixed(1)} MB resident, brk heap ${brk.toFixed(1)} MB\n`);
      expect(brk).toBeLessThan(10);
      expect(rss).toBeLessThan(90);
    },
    60_000,
  );
});
