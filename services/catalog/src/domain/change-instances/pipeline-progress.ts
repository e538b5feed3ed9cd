import type { ChangeInstanceState, EventData, events } from '@pack/contracts';
import type { Logger } from '@pack/logging';
import { serviceRef, step, transitionOf } from './change-records';
import { stateChangedEvent } from '../events';
import type { ChangeInstanceRecord } from '../model';
import { currentOrIgnored, decideUntilWritten, LOST_RACE } from './race-retry';
import { viewDeferred } from './roll-forward';
import type { CatalogStore } from '../store';
import { pipelinePath, type Actor } from '../transitions';

export type PipelineProgressNews = EventData<typeof events.pipelineProgress>;
export type ProgressOutcome = 'applied' | 'stale' | 'ignored';

const PIPELINE: Actor = { kind: 'pipeline' };

/**
 * A pipeline's progress moves its Change Instance (docs/decisions/0026). The version of the
 * latest progress applied is kept in the instance's transition records, so the decision and the
 * write are one unique insert like every other change (docs/decisions/0007): an older or repeated
 * progress changes nothing, and a newer one that needs no state change still records its version,
 * so a late older event can never move the instance back.
 */
export class PipelineProgress {
  constructor(
    private readonly store: CatalogStore,
    private readonly eventsWritten: () => void,
    private readonly logger: Logger,
  ) {}

  async apply(news: PipelineProgressNews): Promise<ProgressOutcome> {
    const id = news.change_instance_id;
    return decideUntilWritten<ProgressOutcome>(
      async () => {
        const current = await currentOrIgnored(this.store, this.logger, id, 'pipeline progress');
        if (!current) return 'ignored';
        const { instance } = current;
        if ((instance.pipeline_progress ?? 0) >= news.version) return 'stale';
        const path = pipelinePath(instance.state, news.state);
        if (path === null) {
          this.logger.info(
            { change_instance_id: id, state: instance.state, progress: news.state },
            'pipeline progress ignored: the change instance cannot move there',
          );
          return 'ignored';
        }
        // LOST_RACE: another change came first (an owner's, another replica's): decide again.
        return (await this.record(instance, path, news)) ? 'applied' : LOST_RACE;
      },
      () => new Error(`change instance ${id} kept changing while the pipeline progress was applied`),
    );
  }

  /** One record: the moves along `path` (none: only the progress version) with their events. */
  private async record(
    instance: ChangeInstanceRecord,
    path: ChangeInstanceState[],
    news: PipelineProgressNews,
  ): Promise<boolean> {
    const now = new Date();
    const states = [instance.state, ...path];
    const moves = path.map((to, index) => ({ from: states[index]!, to }));
    const changed: ChangeInstanceRecord = {
      ...instance,
      state: states.at(-1)!,
      reasons: path.length > 0 ? news.reasons : instance.reasons,
      pipeline_progress: news.version,
      updated_at: now,
      version: instance.version + 1,
    };
    const record = transitionOf(
      changed,
      moves.map((move) => step(move.from, move.to, PIPELINE, news.reasons)),
      now,
    );
    let events: ReturnType<typeof stateChangedEvent>[] = [];
    if (moves.length > 0) {
      const [service, declaration] = await Promise.all([
        this.store.findService(instance.service_id),
        this.store.findDeclaration(instance.declaration_id),
      ]);
      events = moves.map((move) =>
        stateChangedEvent(
          instance,
          serviceRef(service ?? undefined, instance),
          declaration?.content ?? '{}',
          { ...move, reasons: news.reasons, actor: PIPELINE },
          now,
        ),
      );
    }
    if (!(await this.store.insertTransition(record, events))) return false;
    if (events.length > 0) this.eventsWritten();
    await viewDeferred(this.logger, instance._id, () => this.store.updateChangeInstance(changed));
    return true;
  }
}
