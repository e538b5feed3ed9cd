import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CEILINGS } from './ceilings';
import { ownedTempDir, recordProcess } from './leftover-files';
import { freePort } from './ports';
import { waitFor } from './waiting';

export type PrometheusToolName = 'prometheus' | 'promtool';

/**
 * The path of a Prometheus binary on PATH (Debian's `prometheus` package has both). A missing one
 * fails the test that needs it, never skips it: scripts/deps.sh installs it (`pnpm test`'s set-up
 * and .ci/run call it), and a check that silently stops running is worse than a failing one.
 */
export function prometheusTool(name: PrometheusToolName): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const file = found.status === 0 ? found.stdout.trim() : '';
  if (file) return file;
  throw new Error(`${name} is not installed: run \`sudo bash scripts/deps.sh install\``);
}

export interface ToolResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs promtool with `input` on stdin. */
export function promtool(args: string[], input?: string, cwd?: string): ToolResult {
  const binary = prometheusTool('promtool');
  const result = spawnSync(binary, args, { input, cwd, encoding: 'utf8', timeout: 20_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export interface PrometheusTarget {
  labels: Record<string, string>;
  scrapeUrl: string;
  health: 'up' | 'down' | 'unknown';
  lastError: string;
}

export interface PrometheusSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** A real Prometheus server on a free loopback port with a temporary data directory. */
export class PrometheusServer {
  private output = '';

  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
    private readonly dir: string,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
  }

  /** Starts `prometheus` with this configuration (YAML text) and waits until it is ready. */
  static async start(config: string): Promise<PrometheusServer> {
    const binary = prometheusTool('prometheus');
    const dir = ownedTempDir('prometheus');
    const configFile = path.join(dir, 'prometheus.yml');
    writeFileSync(configFile, config);
    const port = await freePort();
    const child = spawn(
      binary,
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    recordProcess(child);
    const server = new PrometheusServer(`http://127.0.0.1:${port}`, child, dir);
    try {
      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`prometheus exited: ${server.output}`);
          return (await fetch(`${server.url}/-/ready`)).ok;
        },
        { timeoutMs: CEILINGS.start, intervalMs: 100, what: 'prometheus to be ready' },
      );
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  /** What Prometheus logged (warnings and errors only). */
  get log(): string {
    return this.output;
  }

  private async api<T>(pathAndQuery: string): Promise<T> {
    const response = await fetch(`${this.url}/api/v1/${pathAndQuery}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${pathAndQuery}: ${body.error}`);
    return body.data;
  }

  async activeTargets(): Promise<PrometheusTarget[]> {
    const data = await this.api<{ activeTargets: PrometheusTarget[] }>('targets?state=active');
    return data.activeTargets;
  }

  /** An instant query's vector. */
  async query(expression: string): Promise<PrometheusSample[]> {
    const data = await this.api<{ resultType: string; result: PrometheusSample[] }>(
      `query?query=${encodeURIComponent(expression)}`,
    );
    return data.result;
  }

  /** The alerts the loaded rules currently have pending or firing. */
  async alerts(): Promise<{ labels: Record<string, string>; state: string }[]> {
    return (await this.api<{ alerts: { labels: Record<string, string>; state: string }[] }>('alerts')).alerts;
  }

  /** The rule groups Prometheus loaded. */
  async ruleGroups(): Promise<{ name: string; rules: { name: string; health: string }[] }[]> {
    return (
      await this.api<{ groups: { name: string; rules: { name: string; health: string }[] }[] }>('rules')
    ).groups;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 5000)))]);
      clearTimeout(timer);
      if (this.child.exitCode === null) this.child.kill('SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
