import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The 1.106 line the figures were measured with. Later 1.106 and 1.105 releases pin a
 * certifi newer than the package index holds; 1.107.0 was a compromised release.
 */
export const LITELLM_VERSION = '1.106.0';

export interface LiteLlm {
  url: string;
  /** The proxy's master key: callers send it as their bearer token. */
  key: string;
  process: ChildProcess;
}

/**
 * Installs `litellm[proxy]` into a virtualenv under .local/ (once) and starts the proxy with one
 * model entry pointing at the fake provider. Throws, saying why, when either step fails.
 */
export async function startLiteLlm(
  root: string,
  upstream: string,
  apiKey: string,
  port: number,
): Promise<LiteLlm> {
  const venv = path.join(root, '.local', 'litellm-venv');
  const bin = path.join(venv, 'bin');
  if (!existsSync(path.join(bin, 'litellm'))) {
    const run = (command: string, args: string[]) => {
      const done = spawnSync(command, args, {
        stdio: ['ignore', 'ignore', 'pipe'],
        encoding: 'utf8',
        timeout: 900_000,
      });
      if (done.status !== 0)
        throw new Error(`${command} ${args.join(' ')} failed: ${done.stderr?.slice(-500)}`);
    };
    process.stdout.write(`installing litellm[proxy]==${LITELLM_VERSION} into .local/litellm-venv ...\n`);
    run('python3', ['-m', 'venv', venv]);
    run(path.join(bin, 'pip'), ['install', '-q', `litellm[proxy]==${LITELLM_VERSION}`]);
  }
  const config = path.join(root, '.local', 'litellm-bench.yaml');
  writeFileSync(
    config,
    [
      'model_list:',
      '  - model_name: fake',
      '    litellm_params:',
      '      model: openai/gpt-4o-mini',
      `      api_base: ${upstream}/v1`,
      `      api_key: ${apiKey}`,
      'litellm_settings:',
      '  telemetry: false',
      '',
    ].join('\n'),
  );
  const key = `sk-${randomBytes(32).toString('hex')}`;
  const child = spawn(
    path.join(bin, 'litellm'),
    ['--config', config, '--port', String(port), '--num_workers', '1'],
    {
      // No model cost map download (the machine reaches no such host); the proxy refuses to
      // start without a master key.
      env: {
        ...process.env,
        LITELLM_LOCAL_MODEL_COST_MAP: 'True',
        LITELLM_LOG: 'ERROR',
        LITELLM_MASTER_KEY: key,
      },
      stdio: ['ignore', 'ignore', process.env.LITELLM_STDERR ? 'inherit' : 'ignore'],
    },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 1200; i += 1) {
    if (child.exitCode !== null) throw new Error(`litellm exited with code ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/health/liveliness`)).status === 200) return { url, key, process: child };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGTERM');
  throw new Error('litellm did not start within 120 s');
}
