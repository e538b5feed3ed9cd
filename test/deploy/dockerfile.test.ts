/**
 * The root Dockerfile and .dockerignore, checked without a Docker engine: one multi-stage image
 * for every service (docs/decisions/0003), the runtime stage without build tools, a non-root
 * user the manifests agree with, a HEALTHCHECK that really tells a live service from a dead one,
 * no secrets baked in, and a build context without local data, node_modules or .git.
 * `hadolint` lints it (scripts/deps.sh installs it from PyPI).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { CEILINGS, freePort } from '@pack/testkit';
import { k8sObjects, ofKind, REPO, type Deployment } from './load';
import { externalTool, run } from './tools';

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  name: string;
  base: string;
  instructions: Instruction[];
}

/** The Dockerfile's stages, each with its instructions (continuations joined, comments dropped). */
function stages(text: string): Stage[] {
  const logical = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const result: Stage[] = [];
  for (const line of logical) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args };
    if (instruction.keyword === 'FROM') {
      const [base = '', , name] = args.split(/\s+/);
      result.push({ name: name ?? String(result.length), base, instructions: [] });
    } else result.at(-1)?.instructions.push(instruction);
  }
  return result;
}

const of = (stage: Stage, keyword: string) =>
  stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);

/** `.dockerignore` as Docker applies it: the last matching pattern wins, `!` re-includes. */
function dockerIgnored(patterns: string[], file: string): boolean {
  const toRegex = (pattern: string) =>
    new RegExp(
      `^${pattern
        .replace(/^\/+/, '')
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*\*\//g, '\u0000')
        .replace(/\*\*/g, '.*')
        .replace(/\*/g, '[^/]*')
        .replace(/\?/g, '[^/]')
        .replace(/\u0000/g, '(?:.*/)?')}$`,
    );
  const parts = file.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const raw of patterns) {
    const negated = raw.startsWith('!');
    const regex = toRegex(negated ? raw.slice(1) : raw);
    // A pattern that matches a folder excludes everything in it.
    if (prefixes.some((prefix) => regex.test(prefix))) ignored = !negated;
  }
  return ignored;
}

const dockerfile = readFileSync(path.join(REPO, 'Dockerfile'), 'utf8');
const all = stages(dockerfile);
const runtime = all.at(-1)!;
const build = all.find((stage) => stage !== runtime && of(stage, 'RUN').some((r) => /pnpm install/.test(r)));
const ignorePatterns = readFileSync(path.join(REPO, '.dockerignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));
const ignored = (file: string) => dockerIgnored(ignorePatterns, file);

/** The HEALTHCHECK's command, exec form. */
function healthcheckCommand(): string[] {
  const [args] = of(runtime, 'HEALTHCHECK');
  const json = /CMD\s+(\[.*\])\s*$/.exec(args ?? '')?.[1];
  if (!json) throw new Error(`HEALTHCHECK must use the exec form CMD [...], not: ${args}`);
  return JSON.parse(json) as string[];
}

async function runHealthcheck(port: number): Promise<number> {
  const [file, ...args] = healthcheckCommand();
  try {
    await promisify(execFile)(file === 'node' ? process.execPath : file!, args, {
      env: { PATH: process.env.PATH, PORT: String(port) },
      timeout: CEILINGS.wait,
    });
    return 0;
  } catch (error) {
    return (error as { code?: number }).code ?? -1;
  }
}

describe('Dockerfile', () => {
  it('builds in a stage of its own from the lockfile, and runs from a second stage', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(build).toBeDefined();
    expect(of(build!, 'RUN').some((r) => /pnpm install\b.*--frozen-lockfile/.test(r))).toBe(true);
    expect(runtime.base).toBe(build!.base); // same Node.js as the build, nothing else
  });

  it('gives the runtime stage only the built /app: no package manager, no build context', () => {
    expect(of(runtime, 'RUN').filter((r) => /\b(pnpm|npm|apt-get|apk)\b/.test(r))).toEqual([]);
    const copies = of(runtime, 'COPY');
    expect(copies.length).toBeGreaterThan(0);
    expect(copies.filter((c) => !c.includes(`--from=${build!.name}`))).toEqual([]);
    expect(of(runtime, 'ADD')).toEqual([]);
  });

  it('copies into the build only files that exist and that .dockerignore lets through', () => {
    const sources = of(build!, 'COPY')
      .filter((c) => !c.includes('--from='))
      .flatMap((c) => c.split(/\s+/).slice(0, -1))
      .filter((s) => !s.startsWith('--') && s !== '.');
    expect(sources.length).toBeGreaterThan(0);
    expect(sources.filter((s) => !existsSync(path.join(REPO, s)) || ignored(s))).toEqual([]);
  });

  it('runs as a non-root numeric user, the uid every Deployment runs as', () => {
    const user = of(runtime, 'USER').at(-1) ?? 'root';
    const uid = user.split(':')[0]!;
    expect(uid).toMatch(/^\d+$/);
    expect(Number(uid)).toBeGreaterThan(0);
    const uids = ofKind<Deployment>(k8sObjects().applied, 'Deployment').map(
      (d) => d.spec.template.spec.securityContext?.runAsUser,
    );
    expect(new Set(uids)).toEqual(new Set([Number(uid)]));
  });

  it('runs in production mode and starts the compiled bundle of a service that exists by default', () => {
    expect(of(runtime, 'ENV').join(' ')).toMatch(/\bNODE_ENV=production\b/);
    const cmd = JSON.parse(of(runtime, 'CMD').at(-1) ?? '[]') as string[];
    expect(cmd[0]).toBe('node');
    expect(cmd).not.toContain('tsx/cjs');
    const main = cmd.find((arg) => /^services\/[^/]+\/dist\/main\.js$/.test(arg));
    expect(main).toBeDefined();
    // Built in the image from the service's main.ts (pnpm build), never copied from the context.
    const source = main!.replace('dist/main.js', 'src/main.ts');
    expect(existsSync(path.join(REPO, source))).toBe(true);
    expect(ignored(source)).toBe(false);
    expect(ignored(main!)).toBe(true);
    expect(of(build!, 'RUN').some((r) => /\bpnpm build\b/.test(r))).toBe(true);
    expect(ignored('scripts/build-services.ts')).toBe(false);
  });

  it('keeps production dependencies only: the dev ones are dropped after the build', () => {
    const steps = of(build!, 'RUN')
      .join(' && ')
      .split('&&')
      .map((step) => step.trim());
    const built = steps.findIndex((step) => /^pnpm build\b/.test(step));
    const pruned = steps.findIndex((step) => /^pnpm install\b.*--prod\b/.test(step));
    expect(built).toBeGreaterThanOrEqual(0);
    expect(pruned).toBeGreaterThan(built);
  });

  it('bakes in no secret: no secret-like ENV or ARG, no .env copied', () => {
    const declared = all.flatMap((stage) => [...of(stage, 'ENV'), ...of(stage, 'ARG')]);
    expect(
      declared.filter((d) => /SECRET|TOKEN|PASSWORD|ENCRYPTION|_KEY\b|MONGO_URL|AMQP_URL/i.test(d)),
    ).toEqual([]);
    const copied = all.flatMap((stage) => [...of(stage, 'COPY'), ...of(stage, 'ADD')]);
    expect(copied.filter((c) => /\.env\b/.test(c))).toEqual([]);
  });

  it("has a HEALTHCHECK that passes while /healthz answers on the service's PORT and fails when it does not", async () => {
    expect(healthcheckCommand().join(' ')).toContain('/healthz');
    const paths: string[] = [];
    const server = http.createServer((request, response) => {
      paths.push(request.url ?? '');
      response.writeHead(request.url === '/healthz' ? 200 : 404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      expect(await runHealthcheck((server.address() as AddressInfo).port)).toBe(0);
      expect(paths).toEqual(['/healthz']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await runHealthcheck(await freePort())).not.toBe(0); // nobody listening: unhealthy
  });

  it('passes hadolint', () => {
    const result = run(externalTool('hadolint'), ['--no-color', 'Dockerfile'], { cwd: REPO });
    expect({ status: result.status, output: `${result.stdout}${result.stderr}` }).toEqual({
      status: 0,
      output: '',
    });
  });
});

describe('.dockerignore', () => {
  it('keeps local data, dependencies, git history and env files out of the build context', () => {
    const kept = [
      '.local/ferretdb/data',
      '.git/HEAD',
      'node_modules/tsx/package.json',
      'services/gateway/node_modules/express/package.json',
      'packages/runtime/node_modules/.bin/tsx',
      '.env',
      '.env.local',
    ].filter((file) => !ignored(file));
    expect(kept).toEqual([]);
  });

  it('lets through what the image needs: manifests, lockfile, sources', () => {
    const dropped = [
      'package.json',
      'pnpm-lock.yaml',
      'pnpm-workspace.yaml',
      'tsconfig.json',
      'test/package.json',
      'services/gateway/package.json',
      'services/gateway/src/main.ts',
      'packages/runtime/src/index.ts',
      'scripts/build-services.ts',
    ].filter((file) => ignored(file));
    expect(dropped).toEqual([]);
  });

  it('is read the way Docker reads it (the matcher refuses what it should)', () => {
    expect(dockerIgnored(['**/node_modules'], 'a/b/node_modules/x')).toBe(true);
    expect(dockerIgnored(['test/*', '!test/package.json'], 'test/package.json')).toBe(false);
    expect(dockerIgnored(['test/*', '!test/package.json'], 'test/e2e/x.test.ts')).toBe(true);
    expect(dockerIgnored(['.git'], '.github/workflows/ci.yml')).toBe(false);
  });
});
