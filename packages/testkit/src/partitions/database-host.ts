import { chmodSync, rmSync } from 'node:fs';
import { ownedTempDir } from '../leftover-files';
import { TEST_INFRA_ENV } from '../infra';
import { sharedFerretBinary } from '../private-db-pair';
import { repoScript } from '../repo';
import { removeNamespace } from './leftover-networks';
import type { Host, PartitionNet } from './net';

/** FerretDB's port on the host's address (the namespace has ports of its own). */
const MONGO_PORT = 27017;

/**
 * The database pair (PostgreSQL and FerretDB, scripts/infra.sh db-up) in a host of its own on the
 * partition bridge: FerretDB on the host's address, PostgreSQL beside it on the host's loopback,
 * their data in a folder of the owner's (removed on stop, or by a later run once the owner is
 * gone). Cutting a host from this one's address cuts it from the database alone, both ways, as a
 * silent network between a service and its database would.
 */
export class NamespacedDatabase {
  private constructor(
    readonly host: Host,
    readonly dir: string,
  ) {}

  static async start(net: PartitionNet): Promise<NamespacedDatabase> {
    const host = net.addHost('database');
    const dir = ownedTempDir('database');
    // PostgreSQL runs as its own user, which must reach its data folder inside this one.
    chmodSync(dir, 0o755);
    const database = new NamespacedDatabase(host, dir);
    const started = net.exec(host, 'bash', [repoScript('infra.sh'), 'db-up'], {
      PACK_INFRA_DIR: dir,
      PACK_PG_PORT: '5432',
      PACK_MONGO_PORT: String(MONGO_PORT),
      PACK_MONGO_LISTEN: '0.0.0.0',
      PACK_FERRETDB_BIN: sharedFerretBinary(),
      ...TEST_INFRA_ENV,
    });
    const result = await started.exited;
    if (result.status !== 0) {
      database.stop();
      throw new Error(`the database pair did not start in ${host.name}: ${result.stderr.slice(-2000)}`);
    }
    return database;
  }

  /** Its MongoDB URL, on the host's address. */
  get url(): string {
    return `mongodb://pack:pack@${this.host.address}:${MONGO_PORT}/?authMechanism=PLAIN`;
  }

  /** The host removed with what runs in it (PostgreSQL, FerretDB), then the pair's folder. */
  stop(): void {
    removeNamespace(this.host.namespace);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
