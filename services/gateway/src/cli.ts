/**
 * Administrative commands run against the gateway's database:
 *   pnpm --filter @pack/gateway cli create-token <username> <admin|service_owner|consumer>
 * prints a new API token (shown only once).
 */
import { loadConfigOrExit } from '@pack/config';
import { roleSchema } from '@pack/contracts';
import { createLogger } from '@pack/logging';
import { gatewayEnvSchema } from './config';
import { withTokenAdmin } from './service';

async function main(argv: string[]): Promise<number> {
  const [command, username, role] = argv;
  if (command !== 'create-token' || !username || !roleSchema.safeParse(role).success) {
    process.stderr.write('usage: cli create-token <username> <admin|service_owner|consumer>\n');
    return 64;
  }
  const config = loadConfigOrExit(gatewayEnvSchema);
  const logger = createLogger({ service: 'gateway-cli', version: '0.1.0', level: 'warn' });
  const issued = await withTokenAdmin(config, logger, (authenticator) =>
    authenticator.issue(username, roleSchema.parse(role)),
  );
  process.stdout.write(`${issued.token}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
