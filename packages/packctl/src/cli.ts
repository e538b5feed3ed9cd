/** The command table, option parsing and help shared by every packctl command. */
import { parseArgs } from 'node:util';

export const EXIT = { ok: 0, failed: 1, usage: 64 } as const;

/** Options every command understands. */
export const GLOBAL_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  gateway: { type: 'string' },
  amqp: { type: 'string' },
  service: { type: 'string', multiple: true },
  limit: { type: 'string' },
  json: { type: 'boolean' },
  mongo: { type: 'string' },
  db: { type: 'string', multiple: true },
  out: { type: 'string' },
  from: { type: 'string' },
  drop: { type: 'boolean' },
} as const;

export interface Context {
  gateway: string;
  /** The admin token (PACK_ADMIN_TOKEN; never an argument, so it stays out of `ps`). */
  token: string | undefined;
  amqpUrl: string;
  /** `name=url` of each service's metrics listener, when given; else deploy/services.yaml. */
  services: string[] | undefined;
  limit: number;
  json: boolean;
  /** The MongoDB or FerretDB server the services use (MONGO_URL), for backup and restore. */
  mongoUrl: string;
  /** `service=database` pairs naming a service's database where it is not the default. */
  databases: string[] | undefined;
  /** backup's --out, restore's --from and --drop. */
  backup: { out?: string; from?: string; drop: boolean };
  out: (text: string) => void;
  err: (text: string) => void;
}

export interface Command {
  /** e.g. `token create <username> <role>` */
  usage: string;
  summary: string;
  /** Lines shown by --help after the usage. */
  details: string[];
  positionals: number;
  run(context: Context, args: string[]): Promise<number>;
}

/** A failure to report in one line and exit 1 (no stack trace: this is for operators). */
export class CliError extends Error {}

export function parse(argv: string[]) {
  return parseArgs({ args: argv, options: GLOBAL_OPTIONS, allowPositionals: true, strict: true });
}

/** Where a command writes its lines: the process's standard output and error, or a caller's own. */
export type Output = Pick<Context, 'out' | 'err'>;

export const PROCESS_OUTPUT: Output = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

export function contextFrom(
  values: ReturnType<typeof parse>['values'],
  env: NodeJS.ProcessEnv,
  output: Output = PROCESS_OUTPUT,
): Context {
  const limit = Number(values.limit ?? 100);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive integer');
  return {
    gateway: (values.gateway ?? env.PACK_GATEWAY_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, ''),
    token: env.PACK_ADMIN_TOKEN,
    amqpUrl: values.amqp ?? env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    services: values.service,
    limit,
    json: values.json ?? false,
    mongoUrl: values.mongo ?? env.MONGO_URL ?? 'mongodb://pack:pack@127.0.0.1:27017/?authMechanism=PLAIN',
    databases: values.db,
    backup: { out: values.out, from: values.from, drop: values.drop ?? false },
    ...output,
  };
}

export class UsageError extends Error {}

export const COMMON_HELP = [
  'Options:',
  '  --gateway <url>        the gateway (PACK_GATEWAY_URL, default http://127.0.0.1:8080)',
  '  --amqp <url>           RabbitMQ (AMQP_URL, default amqp://guest:guest@127.0.0.1:5672)',
  "  --service <name=url>   a service's metrics listener (repeatable; default: deploy/services.yaml on 127.0.0.1)",
  '  --limit <n>            at most n items (default 100)',
  '  --json                 machine-readable output',
  '  -h, --help             this help',
  "Environment: PACK_ADMIN_TOKEN, an admin's API token, for the token commands.",
];

/** Columns padded to their widest cell, for a terminal. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
