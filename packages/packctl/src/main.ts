/**
 * packctl: the operator's command line (`pnpm packctl <command> [options]`).
 *
 *   token create <username> <role> | token list | token revoke <id>
 *   health
 *   dlq list <queue> | dlq replay <queue>
 *   backup --out <dir> | restore --from <dir> [--drop]
 *
 * Every command takes --help; exit 0 on success, 1 on failure, 64 on a usage error.
 */
import { backupCommand, restoreCommand } from './backup/commands';
import {
  CliError,
  COMMON_HELP,
  contextFrom,
  EXIT,
  parse,
  PROCESS_OUTPUT,
  UsageError,
  type Command,
  type Output,
} from './cli';
import { dlqList, dlqReplay } from './dlq';
import { health } from './health';
import { tokenCreate, tokenList, tokenRevoke } from './tokens';

const COMMANDS: Record<string, Command> = {
  'token create': tokenCreate,
  'token list': tokenList,
  'token revoke': tokenRevoke,
  health,
  'dlq list': dlqList,
  'dlq replay': dlqReplay,
  backup: backupCommand,
  restore: restoreCommand,
};

function overview(prefix = ''): string {
  const lines = Object.entries(COMMANDS)
    .filter(([name]) => name.startsWith(prefix))
    .map(([, command]) => `  packctl ${command.usage.padEnd(58)} ${command.summary}`);
  return ['Usage:', ...lines, '', ...COMMON_HELP].join('\n');
}

function help(command: Command): string {
  return [
    `Usage: packctl ${command.usage} [options]`,
    '',
    command.summary,
    ...command.details,
    '',
    ...COMMON_HELP,
  ].join('\n');
}

/**
 * Runs one command line; answers the exit status. `output` takes its lines (the process's
 * standard output and error unless given: a caller in the same process may read them).
 */
export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  output: Output = PROCESS_OUTPUT,
): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    output.err(`${(error as Error).message}\n\n${overview()}`);
    return EXIT.usage;
  }
  const words = parsed.positionals;
  const name = [`${words[0]} ${words[1]}`, words[0] ?? ''].find((candidate) => COMMANDS[candidate]);
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    const group =
      words[0] && Object.keys(COMMANDS).some((n) => n.startsWith(`${words[0]} `)) ? `${words[0]} ` : '';
    if (parsed.values.help || words[0] === 'help' || words.length === 0) {
      output.out(overview(group));
      return words.length === 0 && !parsed.values.help ? EXIT.usage : EXIT.ok;
    }
    output.err(`unknown command: ${words.join(' ')}\n\n${overview(group)}`);
    return EXIT.usage;
  }
  if (parsed.values.help) {
    output.out(help(command));
    return EXIT.ok;
  }
  const args = words.slice(name!.split(' ').length);
  if (args.length !== command.positionals) {
    output.err(`packctl ${command.usage}: expected ${command.positionals} argument(s)`);
    return EXIT.usage;
  }
  try {
    return await command.run(contextFrom(parsed.values, env, output), args);
  } catch (error) {
    if (error instanceof UsageError) {
      output.err(error.message);
      return EXIT.usage;
    }
    output.err(`packctl: ${error instanceof CliError ? error.message : String(error)}`);
    return EXIT.failed;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
