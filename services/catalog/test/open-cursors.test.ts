import mongoose, { type Connection, type mongo } from 'mongoose';
import { CEILINGS, startPrivateFerret, type PrivateFerret } from '@pack/testkit';
import { CatalogRepository } from '../src/data/catalog-repository';
import { TRANSITIONS } from '../src/data/models';
import { itemPointers } from '../src/domain/change-instances/item-pointers';
import type { TransitionRecord } from '../src/domain/model';

// Tests that drive volume: the long ceiling for every test of the file.
jest.setTimeout(CEILINGS.longTest);

/**
 * The 30-minute soak's stall (docs/decisions/0051, amendment): our FerretDB (v1) holds one of its
 * PostgreSQL connections for each open cursor until the client's getMore exhausts it. The
 * Service Item list reads the transitions of a page of items (two finds without a sort, which
 * FerretDB streams); once those passed a first batch's 101 documents, every such read left a
 * cursor open. With FerretDB's pool held by cursors and the services' driver pools full of
 * commands waiting for a PostgreSQL connection, no getMore could be sent: a deadlock across the
 * two pools. Here on a FerretDB of its own whose pool is 4 connections (which also checks that
 * its single-process lock connection leaves the pool settings out of what it sends PostgreSQL),
 * with three catalog connections of 2 each.
 */
const ITEMS = [1, 2, 3];
const DECLARATIONS_PER_ITEM = 100; // 300 submissions and 300 approvals: past a first batch
const CONNECTIONS = 3;
const READS_PER_CONNECTION = 8;

describe('the Service Item list on a busy FerretDB', () => {
  let ferret: PrivateFerret;
  const connections: Connection[] = [];
  const commands: string[] = [];

  beforeAll(async () => {
    ferret = await startPrivateFerret('patched', 'bench_catalog_cursors', 'pool_max_conns=4');
    for (let i = 0; i < CONNECTIONS; i += 1) {
      const connection = await mongoose
        .createConnection(ferret.url, { dbName: 'catalog', maxPoolSize: 2, monitorCommands: true })
        .asPromise();
      connection.getClient().on('commandStarted', (event: mongo.CommandStartedEvent) => {
        commands.push(event.commandName);
      });
      connections.push(connection);
    }
    const records = ITEMS.flatMap((item) =>
      Array.from({ length: DECLARATIONS_PER_ITEM }, (_, i) => {
        const declaration = item * 1000 + i + 1;
        const record: TransitionRecord = {
          _id: `${declaration}:1`,
          change_instance_id: declaration,
          version: 1,
          service_id: 1,
          service_item_id: item,
          declaration_id: declaration,
          steps: [],
          state: 'APPROVED',
          reasons: [],
          approval_seq: i + 1,
          approved_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
          initial: null,
          created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
        };
        return record;
      }),
    );
    await connections[0]!.collection<TransitionRecord>(TRANSITIONS).insertMany(records);
  });

  afterAll(async () => {
    await Promise.all(connections.map((connection) => connection.close(true)));
    await ferret?.stop();
  });

  it(`${CONNECTIONS} connections of 2, ${READS_PER_CONNECTION} concurrent reads of a page's pointers each, on a FerretDB pool of 4: every read answers, one command per find`, async () => {
    commands.length = 0;
    const reads = connections.flatMap((connection) => {
      const store = new CatalogRepository(connection);
      return Array.from({ length: READS_PER_CONNECTION }, () => itemPointers(store, ITEMS));
    });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'stuck'>((resolve) => {
      timer = setTimeout(() => resolve('stuck'), CEILINGS.wait);
    });
    const outcome = await Promise.race([Promise.all(reads), deadline]);
    clearTimeout(timer);
    const latest = (item: number) => item * 1000 + DECLARATIONS_PER_ITEM;
    const expected = ITEMS.map((item) => ({
      latest_declaration_id: latest(item),
      latest_approved_declaration_id: latest(item),
      latest_approved_change_instance_id: latest(item),
    }));
    const answered = outcome === 'stuck' ? [] : outcome;
    expect(outcome === 'stuck' ? `no answer in ${CEILINGS.wait} ms` : `${answered.length} answered`).toBe(
      `${CONNECTIONS * READS_PER_CONNECTION} answered`,
    );
    for (const pointers of answered)
      expect(ITEMS.map((item) => pointers.get(item))).toEqual(
        expected.map((one) => expect.objectContaining(one)),
      );
    expect(commands.filter((name) => name !== 'find')).toEqual([]);
    expect(commands).toHaveLength(CONNECTIONS * READS_PER_CONNECTION * 2);
  });
});
