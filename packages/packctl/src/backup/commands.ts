/** The backup and restore commands: options to the functions of backup.ts and restore.ts. */
import { EXIT, UsageError, type Command } from '../cli';
import { backup } from './backup';
import { databaseOverrides, serviceDatabases } from './databases';
import type { Manifest } from './format';
import { restore } from './restore';

const DATABASE_DETAILS = [
  '  --mongo <url>          the server (MONGO_URL, default mongodb://pack:pack@127.0.0.1:27017/?authMechanism=PLAIN)',
  "  --db <service=name>    a service's database where MONGO_DB is not its default (repeatable)",
  'Scale the services to zero first for one consistent point in time. Secrets stay encrypted:',
  'keep PACK_ENCRYPTION_KEYS, apart from the backup, to read them after a restore.',
];

function summary(manifest: Manifest): string {
  const collections = manifest.databases.flatMap((d) => d.collections);
  const documents = collections.reduce((sum, c) => sum + c.count, 0);
  return `${manifest.databases.length} databases, ${collections.length} collections, ${documents} documents (backup of ${manifest.created_at})`;
}

export const backupCommand: Command = {
  usage: 'backup --out <dir>',
  summary: "write every collection of the six services' databases, and a manifest, to a folder",
  details: [
    'One file per collection (<service>/<collection>.jsonl), one document per line as canonical',
    'Extended JSON; manifest.json lists databases, collections, counts and indexes, and is written last.',
    ...DATABASE_DETAILS,
  ],
  positionals: 0,
  async run(context) {
    if (!context.backup.out) throw new UsageError('packctl backup: --out <dir> is required');
    const manifest = await backup({
      mongoUrl: context.mongoUrl,
      databases: serviceDatabases(context.databases),
      dir: context.backup.out,
      progress: context.err,
    });
    context.out(context.json ? JSON.stringify(manifest) : `backed up ${summary(manifest)}`);
    return EXIT.ok;
  },
};

export const restoreCommand: Command = {
  usage: 'restore --from <dir> [--drop]',
  summary: 'restore a backup: indexes from its manifest, then its documents in batches',
  details: [
    'Each service goes to the database named in the backup unless --db names another. A collection',
    'of the backup that holds documents refuses the whole restore before anything is written;',
    '--drop drops and replaces such collections instead.',
    ...DATABASE_DETAILS,
  ],
  positionals: 0,
  async run(context) {
    if (!context.backup.from) throw new UsageError('packctl restore: --from <dir> is required');
    const manifest = await restore({
      mongoUrl: context.mongoUrl,
      databases: databaseOverrides(context.databases),
      dir: context.backup.from,
      drop: context.backup.drop,
      progress: context.err,
    });
    context.out(context.json ? JSON.stringify(manifest) : `restored ${summary(manifest)}`);
    return EXIT.ok;
  },
};
