import { ExecutionContext } from './execution-context';
import type { ExecutionContextStore, ExecutionNote } from './store';

describe('the execution context a new run reads', () => {
  const feedback: ExecutionNote = {
    _id: 'feedback:1',
    service_item_id: 7,
    kind: 'feedback',
    run: 0,
    text: 'use the larger disk',
    created_at: new Date('2026-12-01T00:00:00Z'),
  };
  let reads: string[];
  let context: ExecutionContext;

  beforeEach(() => {
    reads = [];
    const store = {
      notes: async () => (reads.push('notes'), [feedback]),
      recentRuns: async () => (reads.push('runs'), []),
      modelName: async () => (reads.push('model'), 'gpt-4o-mini'),
    } as unknown as ExecutionContextStore;
    context = new ExecutionContext(store);
  });

  it("tells a retrigger's first run the feedback given before any run", async () => {
    const text = await context.render(7, Promise.resolve(1), { modelId: 1, declarationId: 1 });
    expect(text).toContain('use the larger disk');
    expect(reads.sort()).toEqual(['model', 'notes']);
  });

  it("reads neither runs nor notes for an approval's first run", async () => {
    const text = await context.render(7, Promise.resolve(1), { modelId: 1, declarationId: 1 }, true);
    expect([text, reads]).toEqual([null, ['model']]);
  });

  it("reads the notes of an approval's later run", async () => {
    const text = await context.render(7, Promise.resolve(2), { modelId: 1, declarationId: 1 }, true);
    expect(text).toContain('use the larger disk');
    expect(reads.sort()).toEqual(['model', 'notes', 'runs']);
  });
});
