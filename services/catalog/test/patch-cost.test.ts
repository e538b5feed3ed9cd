import type { mongo } from 'mongoose';
import { consumer, owner, startCatalog, type CatalogHarness } from './harness';

/**
 * A Change Instance PATCH costs at most this many database commands (an approval 6, other
 * moves 5, repeats 3): a move is one conditional write and its records, not a read-modify-write.
 */
const PATCH_BUDGET = 6;
/** An approval also moves its Service Item's pointer: one update (decision 0005). */
const APPROVAL_BUDGET = PATCH_BUDGET + 1;
const TITLE = `costs at most ${PATCH_BUDGET} commands (${APPROVAL_BUDGET} for an approval) for %s`;

describe('what a change instance PATCH costs the database', () => {
  let catalog: CatalogHarness;
  const seen: string[] = [];
  const record = (event: mongo.CommandStartedEvent) => {
    const target: unknown = event.command[event.commandName];
    seen.push(`${event.commandName} ${typeof target === 'string' ? target : ''}`.trim());
  };

  beforeAll(async () => {
    catalog = await startCatalog();
    // Only the request's own commands count: no relay publishing (and no consumer of what it
    // publishes) runs meanwhile.
    await catalog.service.context.outbox.stop();
    catalog.service.context.mongo.connection.getClient().on('commandStarted', record);
  });
  afterAll(async () => {
    catalog.service.context.mongo.connection.getClient().off('commandStarted', record);
    await catalog.stop();
  });

  it.each([
    ['an approval', ['APPROVED']],
    ['a rejection', ['REJECTED']],
    ['a later move', ['APPROVED', 'IN_PROGRESS']],
    ['a repeat', ['CANCELLED', 'CANCELLED']],
  ])(TITLE, async (what, moves) => {
    const service = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: `Cost of ${what}` }))
      .body;
    const submitted = await catalog.as(consumer, 'POST', `/v1/catalog/services/${service.id}/declarations/`, {
      declaration: { size: 'M' },
    });
    const id = submitted.body.change_instance.id as number;
    for (const state of moves) {
      seen.length = 0;
      const reply = await catalog.as(owner, 'PATCH', `/v1/catalog/change_instances/${id}/`, { state });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ state, declaration: { size: 'M' } });
      // Fails when there are more; the diff then lists every command the PATCH sent.
      expect(seen).toEqual(seen.slice(0, state === 'APPROVED' ? APPROVAL_BUDGET : PATCH_BUDGET));
    }
    const read = await catalog.as(owner, 'GET', `/v1/catalog/change_instances/${id}/`);
    expect(read.body.state).toBe(moves.at(-1));
    expect(read.body.history).toHaveLength(1 + new Set(moves).size);
  });
});
