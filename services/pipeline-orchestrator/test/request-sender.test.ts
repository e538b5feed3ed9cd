import mongoose from 'mongoose';
import { createEnvelope, events, type Envelope } from '@pack/contracts';
import { OUTBOX_FIELD, OUTBOX_PENDING_FIELD } from '@pack/db';
import { uniqueName } from '@pack/testkit';
import { PIPELINES_COLLECTION, PipelineRepository } from '../src/data/pipeline-repository';
import { PipelineRequestSender } from '../src/data/request-sender';
import { draftPipeline } from '../src/domain/stage-requests/stage-request';

/** The direct publish of a move's events against the real database, with a broker double. */
describe('publishing a pipeline move’s events at once', () => {
  let connection: mongoose.Connection;
  let published: string[];
  let refuse: boolean;
  let kicks: number;
  let sender: PipelineRequestSender;
  let repository: PipelineRepository;

  beforeAll(async () => {
    connection = await mongoose
      .createConnection(process.env.MONGO_URL!, { dbName: uniqueName('orchestrator_sender') })
      .asPromise();
    repository = new PipelineRepository(connection);
  });
  afterAll(async () => {
    await connection.dropDatabase();
    await connection.close();
  });
  beforeEach(() => {
    published = [];
    refuse = false;
    kicks = 0;
    const broker = {
      publish: async (envelope: Envelope) => {
        if (refuse) throw new Error('broker down');
        published.push(envelope.id);
      },
    };
    sender = new PipelineRequestSender(connection, repository, broker, () => (kicks += 1));
  });

  const progress = (id: string) =>
    createEnvelope(
      events.pipelineProgress,
      {
        change_instance_id: 1,
        service_item_id: 1,
        pipeline_id: 1,
        run: 1,
        state: 'IN_PROGRESS',
        reasons: [],
        version: 1,
      },
      { source: 'test', correlationId: 'c', id },
    );
  const request = (pipelineId: number) =>
    createEnvelope(
      events.llmGenerateRequested,
      {
        request_id: `req-${pipelineId}`,
        llm_model_id: 1,
        messages: [{ role: 'user', content: 'x' }],
        response_schema: null,
        processor_id: 1,
        reply_to: { pipeline_id: pipelineId, stage: 'CONFIG', run: 1 },
      },
      { source: 'test', correlationId: 'c', id: `generate-req-${pipelineId}` },
    );
  async function scheduled(id: number, written: Envelope[]) {
    const draft = draftPipeline(
      id,
      { service_item_id: id, service_id: 1, declaration_id: 1, declaration_json: '{}' },
      `o-${id}`,
      new Date(),
    );
    draft.stages.CONFIG = { ...draft.stages.CONFIG, state: 'SCHEDULED', request_id: `req-${id}`, attempt: 1 };
    await repository.insert({ ...draft, run: 1 }, written);
  }
  const stored = (id: number) => connection.collection(PIPELINES_COLLECTION).findOne({ _id: id as never });

  it('sends the request and the progress, then empties the outbox and marks the stage waiting', async () => {
    const written = [request(1), progress('p-1')];
    await scheduled(1, written);
    const moved = await sender.send(1, 'CONFIG', written[0]!, written);
    expect(moved?.stages.CONFIG.state).toBe('WAITING_FOR_RESPONSE');
    expect(published.sort()).toEqual(['generate-req-1', 'p-1']);
    const doc = await stored(1);
    expect([doc?.[OUTBOX_FIELD], doc?.[OUTBOX_PENDING_FIELD]]).toEqual([[], false]);
  });

  it('keeps another pending event pending for the relay', async () => {
    const written = [request(2)];
    await scheduled(2, [...written, progress('p-other')]);
    const moved = await sender.send(2, 'CONFIG', written[0]!, written);
    expect(moved?.stages.CONFIG.state).toBe('WAITING_FOR_RESPONSE');
    const doc = await stored(2);
    expect([(doc?.[OUTBOX_FIELD] as Envelope[]).map((e) => e.id), doc?.[OUTBOX_PENDING_FIELD]]).toEqual([
      ['p-other'],
      true,
    ]);
  });

  it('leaves everything to the relay when the broker refuses', async () => {
    const written = [request(3), progress('p-3')];
    await scheduled(3, written);
    refuse = true;
    expect(await sender.send(3, 'CONFIG', written[0]!, written)).toBeNull();
    await sender.publish(3, [progress('p-3b')]);
    const doc = await stored(3);
    expect(kicks).toBe(2);
    expect([
      (doc?.[OUTBOX_FIELD] as Envelope[]).length,
      doc?.[OUTBOX_PENDING_FIELD],
      doc?.stages.CONFIG.state,
    ]).toEqual([2, true, 'SCHEDULED']);
  });

  it('publishes a run’s end events and removes exactly them', async () => {
    const end = [progress('p-4-end')];
    await scheduled(4, []);
    await connection
      .collection(PIPELINES_COLLECTION)
      .updateOne({ _id: 4 as never }, { $set: { [OUTBOX_FIELD]: end, [OUTBOX_PENDING_FIELD]: true } });
    await sender.publish(4, end);
    const doc = await stored(4);
    expect(published).toEqual(['p-4-end']);
    expect([doc?.[OUTBOX_FIELD], doc?.[OUTBOX_PENDING_FIELD]]).toEqual([[], false]);
  });
});
