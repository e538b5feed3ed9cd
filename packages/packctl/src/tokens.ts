/** Users and tokens, through the gateway's admin API (/v1/core/tokens/) with an admin token. */
import { CliError, EXIT, table, type Command, type Context } from './cli';

interface Problem {
  title?: string;
  detail?: string;
  errors?: Record<string, string[]>;
}

async function api(context: Context, method: string, path: string, body?: unknown): Promise<unknown> {
  if (!context.token) throw new CliError('set PACK_ADMIN_TOKEN to an admin API token');
  let response: Response;
  try {
    response = await fetch(`${context.gateway}${path}`, {
      method,
      headers: {
        authorization: `Token ${context.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    throw new CliError(`cannot reach the gateway at ${context.gateway}: ${(error as Error).message}`);
  }
  const text = await response.text();
  const parsed = text ? (JSON.parse(text) as unknown) : undefined;
  if (!response.ok) {
    const problem = (parsed ?? {}) as Problem;
    const fields = Object.entries(problem.errors ?? {}).map(
      ([field, messages]) => `${field}: ${messages.join(', ')}`,
    );
    throw new CliError(
      `${method} ${path} answered ${response.status}: ${problem.detail ?? problem.title ?? text}${fields.length ? ` (${fields.join('; ')})` : ''}`,
    );
  }
  return parsed;
}

export const tokenCreate: Command = {
  usage: 'token create <username> <admin|service_owner|consumer>',
  summary: 'create a user (if new) and an API token for it; prints the token, shown only once',
  details: ['The user keeps its role: asking for another role for an existing user fails (409).'],
  positionals: 2,
  async run(context, [username, role]) {
    const created = (await api(context, 'POST', '/v1/core/tokens/', { username, role })) as {
      id: number;
      token: string;
      user: { id: number; username: string; role: string };
    };
    if (context.json) context.out(JSON.stringify(created));
    else {
      context.err(
        `token ${created.id} for ${created.user.username} (${created.user.role}, user ${created.user.id}):`,
      );
      context.out(created.token);
    }
    return EXIT.ok;
  },
};

export const tokenList: Command = {
  usage: 'token list',
  summary: 'list API tokens (id, prefix, user, role, created, revoked), never the tokens themselves',
  details: [],
  positionals: 0,
  async run(context) {
    const page = (await api(context, 'GET', `/v1/core/tokens/?limit=${context.limit}`)) as {
      count: number;
      results: {
        id: number;
        prefix: string;
        user: { username: string; role: string } | null;
        created_at: string;
        revoked_at: string | null;
      }[];
    };
    if (context.json) {
      context.out(JSON.stringify(page));
      return EXIT.ok;
    }
    context.out(
      table(
        ['ID', 'PREFIX', 'USER', 'ROLE', 'CREATED', 'REVOKED'],
        page.results.map((t) => [
          t.id,
          t.prefix,
          t.user?.username ?? '-',
          t.user?.role ?? '-',
          t.created_at,
          t.revoked_at ?? '-',
        ]),
      ),
    );
    if (page.count > page.results.length)
      context.err(`${page.results.length} of ${page.count} shown (--limit)`);
    return EXIT.ok;
  },
};

export const tokenRevoke: Command = {
  usage: 'token revoke <id>',
  summary: 'revoke an API token by its id (see token list); every gateway refuses it within a second',
  details: [],
  positionals: 1,
  async run(context, [id]) {
    if (!/^\d+$/.test(id ?? '')) throw new CliError(`token id must be a number, not ${id}`);
    await api(context, 'DELETE', `/v1/core/tokens/${id}/`);
    context.out(`token ${id} revoked`);
    return EXIT.ok;
  },
};
