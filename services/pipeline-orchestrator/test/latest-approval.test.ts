import mongoose from 'mongoose';
import { uniqueName } from '@pack/testkit';
import { ServiceItemRepository } from '../src/data/service-item-repository';
import type { ServiceItemRecord } from '../src/domain/records/pipeline-records';

/**
 * The orchestrator's latest approved declaration of an item follows the catalog's order (decision
 * 0005: the highest approval number wins, even for an older declaration), whatever order the
 * approval events arrive in, however often, on two replicas at once.
 */
describe("a Service Item's latest approved declaration from approval events", () => {
  const ITEM = 11;
  let connection: mongoose.Connection;
  let replicas: ServiceItemRepository[];

  /** Change Instance `i` approves declaration `declaration` as approval number `seq`. */
  const approval = (i: number, declaration: number, seq?: number): ServiceItemRecord => ({
    service_item_id: ITEM,
    service_id: 1,
    declaration_id: declaration,
    declaration_json: JSON.stringify({ v: declaration }),
    change_instance_id: i,
    ...(seq === undefined ? {} : { approval_seq: seq }),
  });

  beforeAll(async () => {
    connection = await mongoose
      .createConnection(process.env.MONGO_URL!, { dbName: uniqueName('orchestrator_latest_approval') })
      .asPromise();
    replicas = [new ServiceItemRepository(connection), new ServiceItemRepository(connection)];
  });
  afterEach(() => connection.collection('service_items').deleteMany({}));
  afterAll(async () => {
    await connection.dropDatabase();
    await connection.close();
  });

  it('the older declaration approved last is kept: its approval number is the higher', async () => {
    expect(await replicas[0]!.applyApproved(approval(2, 20, 5))).toBe(true);
    expect(await replicas[0]!.applyApproved(approval(1, 10, 6))).toBe(true);
    expect(await replicas[1]!.applyApproved(approval(2, 20, 5))).toBe(false);
    expect(await replicas[0]!.find(ITEM)).toMatchObject({ declaration_id: 10, change_instance_id: 1 });
  });

  it('20 approvals, each delivered twice, in random order on two replicas at once: the highest number wins', async () => {
    const approvals = Array.from({ length: 20 }, (_, i) => approval(100 + i, 1000 - i, 50 + i));
    const deliveries = [...approvals, ...approvals].sort(() => Math.random() - 0.5);
    await Promise.all(deliveries.map((each, i) => replicas[i % 2]!.applyApproved(each)));
    expect(await replicas[1]!.find(ITEM)).toMatchObject({ declaration_id: 981, change_instance_id: 119 });
  });

  it('an approval without a number (an event of before) never replaces one with a number', async () => {
    await replicas[0]!.applyApproved(approval(1, 10));
    expect(await replicas[0]!.find(ITEM)).toMatchObject({ change_instance_id: 1 });
    await replicas[0]!.applyApproved(approval(2, 5, 7));
    expect(await replicas[0]!.applyApproved(approval(3, 30))).toBe(false);
    expect(await replicas[0]!.find(ITEM)).toMatchObject({ declaration_id: 5, change_instance_id: 2 });
  });
});
