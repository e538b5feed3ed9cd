/** Which database each service keeps its state in, as packctl backup and restore address them. */
import { CliError } from '../cli';

/**
 * Each service's MONGO_DB default (its env schema's `database`); a deployment that sets MONGO_DB
 * on a service names the same database with `--db service=name`.
 */
export const SERVICE_DATABASES: Readonly<Record<string, string>> = {
  gateway: 'pack_gateway',
  catalog: 'pack_catalog',
  settings: 'pack_settings',
  'llm-gateway': 'pack_llm_gateway',
  'pipeline-orchestrator': 'pack_pipeline_orchestrator',
  'webhook-dispatcher': 'pack_webhook_dispatcher',
};

export interface ServiceDatabase {
  service: string;
  database: string;
}

/** The `--db service=name` pairs as a map from service to database. */
export function databaseOverrides(pairs: string[] = []): Record<string, string> {
  const names: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const service = pair.slice(0, at);
    const database = pair.slice(at + 1);
    if (at < 1 || !(service in SERVICE_DATABASES))
      throw new CliError(
        `--db takes service=name with a service of ${Object.keys(SERVICE_DATABASES).join(', ')}`,
      );
    if (!/^[A-Za-z0-9_-]+$/.test(database)) throw new CliError(`--db ${pair}: not a database name`);
    names[service] = database;
  }
  return names;
}

/** The six services' databases, the `--db service=name` pairs given replacing the defaults. */
export function serviceDatabases(pairs: string[] = []): ServiceDatabase[] {
  const names = { ...SERVICE_DATABASES, ...databaseOverrides(pairs) };
  return Object.entries(names).map(([service, database]) => ({ service, database }));
}
