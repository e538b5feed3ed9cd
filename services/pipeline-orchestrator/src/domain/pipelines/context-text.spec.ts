import { contextBudget } from './context-budget';
import { contextHeader, contextRuns, fitContext } from './context-text';
import { draftPipeline } from '../stage-requests/stage-request';
import type { PipelineRecord } from '../records/pipeline-records';
import type { ExecutionNote } from './store';

const item = { service_item_id: 7, service_id: 1, declaration_id: 3, declaration_json: '{"size":"s"}' };

function run(number: number, config: string, declaration = item): PipelineRecord {
  const pipeline = { ...draftPipeline(100 + number, declaration, `o${number}`, new Date(0)), run: number };
  pipeline.stages.CONFIG = {
    ...pipeline.stages.CONFIG,
    state: 'OK',
    origin: 'generated',
    pack_data_json: config,
  };
  return pipeline;
}

const note = (kind: ExecutionNote['kind'], about: number, text: string, at: number): ExecutionNote => ({
  _id: `${kind}-${at}`,
  service_item_id: 7,
  kind,
  run: about,
  text,
  created_at: new Date(at),
});

describe('the execution context', () => {
  it("tells each run's declaration, every stage's PackData, errors, feedback and optimizer notes, oldest first", () => {
    const first = run(1, '{"disk":500}', { ...item, declaration_id: 2, declaration_json: '{"size":"xl"}' });
    const second = run(2, '{"disk":250}');
    second.stages.VERIFY = { ...second.stages.VERIFY, state: 'FAILED', error: 'quota exceeded' };
    const notes = [
      note('optimizer', 2, 'Ask for the quota first.', 3),
      note('feedback', 1, 'halve the disk', 2),
    ];
    const entries = contextRuns([second, first], notes, 3);
    const fitted = fitContext(contextHeader(7), entries, 10_000);
    expect(fitted.text).toBe(
      [
        contextHeader(7),
        'Run 1 (pipeline 101, on declaration 2):',
        '  Declaration: {"size":"xl"}',
        '- CONFIG: OK',
        '  PackData generated: {"disk":500}',
        '- VERIFY: not run',
        '- EXECUTION: not run',
        'Feedback on run 1: halve the disk',
        'Run 2 (pipeline 102, on declaration 3, the current one):',
        '- CONFIG: OK',
        '  PackData generated: {"disk":250}',
        '- VERIFY: FAILED (error: quota exceeded)',
        '- EXECUTION: not run',
        'Pack Optimizer notes after run 2: Ask for the quota first.',
      ].join('\n'),
    );
    expect(fitted.left_out).toEqual([]);
  });

  it('keeps the newest run whole first, cuts the next with a marker and names the runs left out, within the budget', () => {
    const big = (n: number) => JSON.stringify({ run: n, blob: 'x'.repeat(3_000) });
    const entries = contextRuns(
      [5, 4, 3, 2, 1].map((n) => run(n, big(n))),
      [],
      3,
    );
    const budget = 6_144;
    const fitted = fitContext(contextHeader(7), entries, budget);
    expect(fitted.text.length).toBeLessThanOrEqual(budget);
    expect(fitted.kept.map((kept) => [kept.entry.run, kept.cut])).toEqual([
      [4, true],
      [5, false],
    ]);
    expect(fitted.text).toContain(big(5));
    expect(fitted.text).toContain('[... run 4 is cut here: the context budget of 6144 characters is spent]');
    expect(fitted.left_out).toEqual([3, 2, 1]);
    expect(fitted.text).toContain(
      '[Runs 1 to 3 (3) are left out: the context budget of 6144 characters is spent]',
    );
  });

  it('cuts the newest run too when it alone is over the budget', () => {
    const entries = contextRuns([run(1, JSON.stringify({ blob: 'y'.repeat(9_000) }))], [], 3);
    const fitted = fitContext(contextHeader(7), entries, 6_144);
    expect(fitted.text.length).toBeLessThanOrEqual(6_144);
    expect(fitted.kept).toHaveLength(1);
    expect(fitted.kept[0]!.cut).toBe(true);
  });

  it("budgets by the model's context window, known by its name, with a small default for unknown names", () => {
    expect(contextBudget('gpt-4o-mini')).toEqual({
      characters: 48_000,
      window_tokens: 128_000,
      window_known: true,
    });
    expect(contextBudget('gpt-4')).toEqual({ characters: 6_144, window_tokens: 8_192, window_known: true });
    expect(contextBudget('my-private-llm')).toEqual({
      characters: 6_144,
      window_tokens: 8_192,
      window_known: false,
    });
    expect(contextBudget(null).characters).toBe(6_144);
    expect(contextBudget('gpt-3.5-turbo').characters).toBe(12_288);
  });
});
