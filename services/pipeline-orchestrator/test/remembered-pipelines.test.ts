import mongoose from 'mongoose';
import type { Envelope, EventData, events, ProcessorKind } from '@pack/contracts';
import { uniqueName } from '@pack/testkit';
import { PipelineRepository } from '../src/data/pipeline-repository';
import { PipelineRequestSender } from '../src/data/request-sender';
import type { ProcessorRecord } from '../src/domain/records/processor-records';
import type { PipelineRecord } from '../src/domain/records/pipeline-records';
import { Pipelines } from '../src/domain/pipelines/pipelines';
import { progressEvents } from '../src/domain/stage-moves/progress';

type Request = EventData<typeof events.llmGenerateRequested>;

const processor = (kind: ProcessorKind, id: number): ProcessorRecord => ({
  _id: id,
  name: kind,
  service_id: 1,
  kind,
  llm_model_id: 1,
  prompt: `You are the ${kind} processor.`,
  response_schema_json: null,
  generative_ui: false,
  active: true,
  deleted: false,
  version: 1,
  created_at: new Date(),
  updated_at: new Date(),
});
const PROCESSORS: Partial<Record<ProcessorKind, ProcessorRecord>> = {
  config: processor('config', 1),
  verify: processor('verify', 2),
  execution: processor('execution', 3),
};

/**
 * Two orchestrator replicas on one database: each remembers the pipelines it wrote and reads a
 * result's pipeline from memory. A copy the other replica has changed since must never decide
 * anything: the result is applied on a fresh read, with nothing the other replica wrote undone.
 */
describe('a pipeline remembered by a replica that another replica changed', () => {
  let connection: mongoose.Connection;
  const sent: Request[] = [];

  const replica = () => {
    const store = new PipelineRepository(connection);
    const broker = {
      publish: async (envelope: Envelope) => {
        if (envelope.type.startsWith('llm.generate.requested')) sent.push(envelope.data as Request);
      },
    };
    const pipelines = new Pipelines({
      store,
      items: {
        applyApproved: async () => true,
        find: async () => null,
        cancel: async () => undefined,
        cancellation: async () => null,
      },
      directory: { service: async () => null } as never,
      processors: { active: async (_service, kind) => PROCESSORS[kind] ?? null },
      nextProcessors: { active: async (_service, kind) => PROCESSORS[kind] ?? null },
      approvalProcessors: { active: async (_service, kind) => PROCESSORS[kind] ?? null },
      findProcessor: async () => null,
      catalogSchema: () => ({}),
      observer: { transition: () => undefined, finished: () => undefined },
      context: { render: async () => null },
      finishing: async (pipeline, outcome, reasons) => progressEvents(pipeline, outcome, reasons),
      requests: new PipelineRequestSender(connection, store, broker, () => undefined),
      switches: { processors: () => true, validator: () => true },
      budget: { exhausted: async () => null },
    });
    return { store, pipelines };
  };

  beforeAll(async () => {
    connection = await mongoose
      .createConnection(process.env.MONGO_URL!, { dbName: uniqueName('orchestrator_remembered') })
      .asPromise();
  });
  afterAll(async () => {
    await connection.dropDatabase();
    await connection.close();
  });

  const item = (id: number) => ({
    service_item_id: id,
    service_id: 1,
    declaration_id: id,
    declaration_json: '{}',
  });
  const ok = (request: Request, data: object) => ({
    request_id: request.request_id,
    llm_model_id: 1,
    processor_id: request.processor_id,
    reply_to: request.reply_to,
    ok: true,
    output: JSON.stringify(data),
    parsed_json: null,
    usage: { input_tokens: 1, output_tokens: 1 },
    cost: '0.000001',
    unpriced: false,
    mode: 'none' as const,
    attempts: 1,
    latency_ms: 1,
    error: null,
  });
  const requestOf = (pipelineId: number, stage: string) =>
    sent.find((request) => request.reply_to?.pipeline_id === pipelineId && request.reply_to.stage === stage)!;

  it('applies a result for a stage its copy never saw start (another replica started it)', async () => {
    const [a, b] = [replica(), replica()];
    const started = (await a.pipelines.startRun(item(1), PROCESSORS.config!, 'origin-1'))!;
    expect(a.store.recent(started._id)?.stages.CONFIG.state).toBe('WAITING_FOR_RESPONSE');

    await b.pipelines.results.result(ok(requestOf(started._id, 'CONFIG'), { config: 1 }));
    // A's copy still shows CONFIG waiting and VERIFY never started; the VERIFY result comes to A.
    await a.pipelines.results.result(ok(requestOf(started._id, 'VERIFY'), { verified: true }));

    const now = (await a.store.find(started._id))!;
    expect([now.stages.CONFIG.state, now.stages.VERIFY.state, now.stages.EXECUTION.state]).toEqual([
      'OK',
      'OK',
      'WAITING_FOR_RESPONSE',
    ]);
    expect(now.stages.VERIFY.pack_data_json).toBe('{"verified":true}');
  });

  it('builds the next stage from what the other replica wrote, not from its own older copy', async () => {
    const [a, b] = [replica(), replica()];
    const started = (await a.pipelines.startRun(item(2), PROCESSORS.config!, 'origin-2'))!;
    await a.pipelines.results.result(ok(requestOf(started._id, 'CONFIG'), { config: 2 }));
    // B replaces CONFIG's PackData while VERIFY runs (as a push of endpoint 5 does).
    const pushed = await b.store.move(
      started._id,
      'CONFIG',
      { states: ['OK'] },
      { CONFIG: { pack_data_json: '{"pushed":true}' } },
      [],
      null,
    );
    expect(pushed?.rev).toBe((a.store.recent(started._id)?.rev ?? 0) + 1);

    await a.pipelines.results.result(ok(requestOf(started._id, 'VERIFY'), { verified: 2 }));

    const prompt = requestOf(started._id, 'EXECUTION')
      .messages.map((m) => m.content)
      .join('\n');
    expect(prompt).toContain('{"pushed":true}');
    expect(prompt).not.toContain('{"config":2}');
    const now = (await a.store.find(started._id))!;
    expect([now.stages.CONFIG.pack_data_json, now.stages.VERIFY.state, now.costs]).toEqual([
      '{"pushed":true}',
      'OK',
      ['0.000001', '0.000001'],
    ]);
  });

  it('spec 2.2 "Cost of a pipeline = the sum of the costs of the individual responses across all its stages.": a replaced attempt\'s late result reaching both replicas, and again, counts once', async () => {
    const [a, b] = [replica(), replica()];
    const started = (await a.pipelines.startRun(item(3), PROCESSORS.config!, 'origin-3'))!;
    await a.pipelines.results.result(ok(requestOf(started._id, 'CONFIG'), { config: 3 }));
    const verify = requestOf(started._id, 'VERIFY');
    // B replaces the running VERIFY attempt (as a push of endpoint 5 does): attempt 2, no request out.
    const replaced = await b.store.move(
      started._id,
      'VERIFY',
      { states: ['SCHEDULED', 'WAITING_FOR_RESPONSE'], request_id: verify.request_id },
      { VERIFY: { state: 'OK', origin: 'pushed', attempt: 2, request_id: null, pack_data_json: '{"p":1}' } },
      [],
      null,
    );
    expect(replaced?.stages.VERIFY.attempt).toBe(2);

    const late = { ...ok(verify, { verified: 3 }), cost: '0.000002' };
    await Promise.all([a.pipelines.results.result(late), b.pipelines.results.result(late)]);
    await a.pipelines.results.result(late);

    const now = (await a.store.find(started._id))!;
    expect(now.costs).toEqual(['0.000001', '0.000002']);
    expect(now.stages.VERIFY).toMatchObject({ state: 'OK', origin: 'pushed', attempt: 2, cost: null });
    expect(now.stages.VERIFY.pack_data_json).toBe('{"p":1}');
    expect(now.stages.EXECUTION.state).toBeNull();
  });

  it('concurrent starts of one item on two replicas leave one live run, and no superseded run starts VERIFY', async () => {
    const [a, b] = [replica(), replica()];
    for (let round = 0; round < 8; round += 1) {
      const sentBefore = sent.length;
      const starts = [a, b, a, b].map((replica, index) =>
        replica.pipelines.startRun(item(4), PROCESSORS.config!, `origin-4-${round}-${index}`),
      );
      const answers = (await Promise.all(starts)).map((run) => run!._id);
      const runs = await connection
        .collection<PipelineRecord>('pipelines')
        .find({ service_item_id: 4, origin: { $regex: `^origin-4-${round}-` } })
        .toArray();
      const live = runs.filter((run) => run.superseded_by === undefined);
      expect(live).toHaveLength(1);
      // Every start answers with the live run, or with its own run superseded by a later one.
      for (const id of answers) expect(runs.map((run) => run._id)).toContain(id);
      // Each CONFIG request sent is answered, by either replica: only the live run goes on.
      const configs = sent.slice(sentBefore).filter((request) => request.reply_to?.stage === 'CONFIG');
      await Promise.all(
        configs.map((request, i) => [a, b][i % 2]!.pipelines.results.result(ok(request, { r: round }))),
      );
      const verifies = sent.slice(sentBefore).filter((request) => request.reply_to?.stage === 'VERIFY');
      expect(verifies.map((request) => request.reply_to!.pipeline_id)).toEqual([live[0]!._id]);
      // The live run's VERIFY ends it: the next round starts from no running run.
      await a.pipelines.results.result(ok(verifies[0]!, { v: round }));
      await a.pipelines.results.result(ok(requestOf(live[0]!._id, 'EXECUTION'), { e: round }));
    }
  });
});
