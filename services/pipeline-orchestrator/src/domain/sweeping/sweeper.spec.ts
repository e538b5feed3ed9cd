import type { Stage } from '@pack/contracts';
import type { PipelineRecord, StageRecord } from '../records/pipeline-records';
import { emptyStage } from '../stage-requests/stage-request';
import { StageSweeper, type StageBudget, type SweepStore } from './sweeper';

const T0 = new Date('2026-11-23T12:00:00Z');

function pipeline(id: number, stages: Partial<Record<Stage, Partial<StageRecord>>>): PipelineRecord {
  const stage = (name: Stage) => ({ ...emptyStage(), ...stages[name] });
  return {
    _id: id,
    service_item_id: id,
    service_id: 1,
    run: 1,
    origin: `trigger:${id}`,
    declaration_id: 1,
    declaration_json: '{}',
    stages: { CONFIG: stage('CONFIG'), VERIFY: stage('VERIFY'), EXECUTION: stage('EXECUTION') },
    costs: [],
    created_at: T0,
    updated_at: T0,
  };
}

const running = (
  processor: number,
  state: 'SCHEDULED' | 'WAITING_FOR_RESPONSE' = 'WAITING_FOR_RESPONSE',
) => ({
  state,
  processor_id: processor,
  request_id: `request-${processor}`,
  started_at: T0,
});

/** The store over a fixed list of watched pipelines, recording what the sweeper did. */
function store(watched: PipelineRecord[], timeouts: Record<number, number | number[]>) {
  const unwatched: number[] = [];
  const pages: number[] = [];
  const sweepStore: SweepStore = {
    async watched(afterId, limit) {
      pages.push(afterId);
      return watched.filter((p) => p._id > afterId).slice(0, limit);
    },
    async unwatch(id) {
      unwatched.push(id);
      return true;
    },
    async modelTimeouts(ids) {
      return new Map(ids.filter((id) => id in timeouts).map((id) => [id, [timeouts[id]!].flat()]));
    },
  };
  return { sweepStore, unwatched, pages };
}

const ONE_ATTEMPT: StageBudget = {
  marginMs: 5000,
  callAttempts: 1,
  backoffMs: 0,
  resendAfterMs: 1_000_000,
  maxResends: 0,
};

function sweeper(sweepStore: SweepStore, pageSize = 200, budget = ONE_ATTEMPT) {
  const failed: string[] = [];
  const timedOut: Stage[] = [];
  const resent: string[] = [];
  const instance = new StageSweeper({
    resender: {
      async resend(id, stage, requestId, now) {
        resent.push(`${id} ${stage} ${requestId} at ${now.getTime() - T0.getTime()}`);
        return true;
      },
    },
    store: sweepStore,
    failer: {
      async failRunning(id, stage, requestId, error) {
        failed.push(`${id} ${stage} ${requestId} ${error}`);
        return true;
      },
    },
    observer: { swept: () => undefined, timedOut: (stage) => timedOut.push(stage) },
    budget,
    pageSize,
  });
  return { instance, failed, timedOut, resent };
}

describe('the stage timeout sweeper', () => {
  it('fails a running stage only past its model timeout plus the margin', async () => {
    const { sweepStore } = store([pipeline(1, { VERIFY: running(7) })], { 7: 10 });
    const { instance, failed, timedOut } = sweeper(sweepStore);
    // 10 s timeout + 5 s margin: at 15 s it is still in time, at 15.001 s it is not.
    expect(await instance.sweep(new Date(T0.getTime() + 15_000))).toEqual({
      watched: 1,
      failed: 0,
      resent: 0,
    });
    expect(await instance.sweep(new Date(T0.getTime() + 15_001))).toEqual({
      watched: 1,
      failed: 1,
      resent: 0,
    });
    expect(failed).toEqual([
      "1 VERIFY request-7 timeout: no result within 1 attempt(s) of the model's 10 s timeout and 0 s backoff plus the 5 s margin (state WAITING_FOR_RESPONSE)",
    ]);
    expect(timedOut).toEqual(['VERIFY']);
  });

  it('takes 60 s for a model the projection does not know, and fails a SCHEDULED stage too', async () => {
    const { sweepStore } = store([pipeline(1, { CONFIG: running(8, 'SCHEDULED') })], {});
    const { instance, failed } = sweeper(sweepStore);
    expect((await instance.sweep(new Date(T0.getTime() + 65_000))).failed).toBe(0);
    expect((await instance.sweep(new Date(T0.getTime() + 65_001))).failed).toBe(1);
    expect(failed[0]).toMatch(/model's 60 s timeout .* \(state SCHEDULED\)$/);
  });

  it('stops watching pipelines with nothing running and reads every page', async () => {
    const watched = [
      pipeline(1, { CONFIG: { state: 'OK' } }),
      pipeline(2, { CONFIG: running(7) }),
      pipeline(3, { CONFIG: { state: 'OK' }, VERIFY: { state: 'FAILED' } }),
      pipeline(4, { EXECUTION: running(7) }),
      pipeline(5, {}),
    ];
    const { sweepStore, unwatched, pages } = store(watched, { 7: 10 });
    const { instance, failed } = sweeper(sweepStore, 2);
    expect(await instance.sweep(new Date(T0.getTime() + 60_000))).toEqual({
      watched: 5,
      failed: 2,
      resent: 0,
    });
    expect(pages).toEqual([0, 2, 4]);
    expect(unwatched).toEqual([1, 3, 5]);
    expect(failed.map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual(['2 CONFIG', '4 EXECUTION']);
  });

  it('the stuck-stage timeout covers every attempt a call may make', async () => {
    const budget = { ...ONE_ATTEMPT, callAttempts: 6, backoffMs: 5000 };
    const { sweepStore } = store([pipeline(1, { CONFIG: running(7) })], { 7: 10 });
    const { instance, failed } = sweeper(sweepStore, 200, budget);
    // 6 attempts x (10 s timeout + 5 s backoff) + 5 s margin = 95 s.
    expect((await instance.sweep(new Date(T0.getTime() + 95_000))).failed).toBe(0);
    expect((await instance.sweep(new Date(T0.getTime() + 95_001))).failed).toBe(1);
    expect(failed[0]).toBe(
      "1 CONFIG request-7 timeout: no result within 6 attempt(s) of the model's 10 s timeout and 5 s backoff plus the 5 s margin (state WAITING_FOR_RESPONSE)",
    );
  });

  it('"The stuck-stage deadline covers the whole chain": every fallback model\'s attempts are added', async () => {
    const budget = { ...ONE_ATTEMPT, callAttempts: 6, backoffMs: 5000 };
    const { sweepStore } = store([pipeline(1, { CONFIG: running(7) })], { 7: [10, 20] });
    const { instance, failed } = sweeper(sweepStore, 200, budget);
    // 6 x (10 s + 5 s) for the asked model + 6 x (20 s + 5 s) for its fallback + 5 s margin = 245 s.
    expect((await instance.sweep(new Date(T0.getTime() + 245_000))).failed).toBe(0);
    expect((await instance.sweep(new Date(T0.getTime() + 245_001))).failed).toBe(1);
    expect(failed[0]).toBe(
      "1 CONFIG request-7 timeout: no result within 6 attempt(s) of each of the 2 models' timeouts (10 s, 20 s; fallbacks included) and 5 s backoff plus the 5 s margin (state WAITING_FOR_RESPONSE)",
    );
  });

  it('sends a quiet stage request again after resendAfterMs, at most maxResends times', async () => {
    const budget = { ...ONE_ATTEMPT, marginMs: 100_000, resendAfterMs: 20_000, maxResends: 2 };
    const T = (ms: number) => new Date(T0.getTime() + ms);
    const watched = [
      pipeline(1, { CONFIG: running(7) }),
      pipeline(2, { VERIFY: { ...running(8), resends: 1, resent_at: T(30_000) } }),
      pipeline(3, { EXECUTION: { ...running(9), resends: 2, resent_at: T(1000) } }),
    ];
    const { sweepStore } = store(watched, { 7: 10, 8: 10, 9: 10 });
    const { instance, resent, failed } = sweeper(sweepStore, 200, budget);
    expect(await instance.sweep(T(20_000))).toEqual({ watched: 3, failed: 0, resent: 0 });
    // Pipeline 1 sent 20 s ago; pipeline 2 resent 30 s after the start; pipeline 3 used its two.
    expect(await instance.sweep(T(20_001))).toEqual({ watched: 3, failed: 0, resent: 1 });
    expect(await instance.sweep(T(50_001))).toEqual({ watched: 3, failed: 0, resent: 2 });
    expect(resent).toEqual([
      '1 CONFIG request-7 at 20001',
      '1 CONFIG request-7 at 50001',
      '2 VERIFY request-8 at 50001',
    ]);
    // Past the deadline (10 s + 100 s) a stage is failed, not sent again.
    expect(await instance.sweep(T(110_001))).toEqual({ watched: 3, failed: 3, resent: 0 });
    expect(failed).toHaveLength(3);
  });
});
