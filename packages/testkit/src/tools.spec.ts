import { spawnSync } from 'node:child_process';
import { ensureTools } from './infra';
import { repoScript } from './repo';

const DEPS = repoScript('deps.sh');
const TRACE_VIEWER = repoScript('trace-viewer.sh');

/** scripts/deps.sh with these tools taken as missing (PACK_DEPS_ASSUME_MISSING), nothing removed. */
const deps = (mode: string, missing: string) =>
  spawnSync('bash', [DEPS, mode], {
    encoding: 'utf8',
    env: { ...process.env, PACK_DEPS_ASSUME_MISSING: missing },
  });

/** Every tool the suite needs, in the script's order: taken as missing, the result is the same on any machine. */
const ALL =
  'postgresql-15 rabbitmq-server go slapd ldapsearch openssl chromium prometheus promtool hadolint schemathesis kustomize java curl zipkin';

describe('the system tools of the suite (scripts/deps.sh)', () => {
  it('check names every missing tool and the one command that installs them, and fails', () => {
    const result = deps('check', ALL);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `[deps] missing: ${ALL}\n` +
        `[deps] install them with: sudo bash ${DEPS} install\n` +
        `[deps] (the trace viewer's jar alone needs no root: bash ${TRACE_VIEWER} fetch)\n`,
    );
  });

  it('stops the test run at once when a tool is missing and the user is not root, with that command', () => {
    const env = { ...process.env, PACK_DEPS_ASSUME_MISSING: ALL };
    expect(() => ensureTools(false, env)).toThrow(
      'system tools missing for the test suite\n' +
        `[deps] missing: ${ALL}\n` +
        `[deps] install them with: sudo bash ${DEPS} install\n` +
        `[deps] (the trace viewer's jar alone needs no root: bash ${TRACE_VIEWER} fetch)`,
    );
  });

  it('an unknown mode is a usage error', () => {
    const result = deps('nonsense', '');
    expect({ status: result.status, stderr: result.stderr }).toEqual({
      status: 2,
      stderr: `usage: ${DEPS} check|install|list\n`,
    });
  });
});
