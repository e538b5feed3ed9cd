import { createEnvelope, events, type EventData } from '@pack/contracts';
import type { Logger } from '@pack/logging';
import type { AiSwitches } from '../records/ai-switches';
import type { BudgetGate } from '../budgets/budgets';
import { VALIDATOR_SCHEMA } from '../stage-requests/internal-schemas';
import type { GenerateResult } from '../records/pipeline-records';
import type { ActiveProcessors } from '../records/processor-records';
import { SOURCE } from '../records/source';
import { generateRequest } from '../stage-requests/stage-request';
import type { ValidationStore } from './store';

type Created = EventData<typeof events.changeInstanceCreated>;
type Decision = EventData<typeof events.changeInstanceValidationDecided>;

export const VALIDATOR_REQUEST_PREFIX = 'validator-';

/** Counts validations that ended without a decision, by cause (metrics.ts). */
export interface ValidationObserver {
  undecided(cause: 'no_decision' | 'generation_failed'): void;
}

/**
 * The Change Instance Validator (spec 2.4, DESIGN section 7): a new Change Instance of a Service
 * with an active validator is given to its model with the internal `{decision, reasons}` schema,
 * and the decision goes to the catalog as `validation_decided` (which applies it while the
 * instance is PENDING, docs/decisions/0005). The validation's unique id (the instance's) makes a
 * redelivered creation ask nothing twice; its conditional settle makes a repeated result decide
 * nothing twice. While `show_ai_validator` is off (0040) it asks nothing: the instance waits for
 * the Service Owner, as without a validator; a validation already asked still decides.
 */
export class ChangeInstanceValidator {
  constructor(
    private readonly store: ValidationStore,
    private readonly processors: ActiveProcessors,
    private readonly eventsWritten: () => void,
    private readonly logger: Logger,
    private readonly switches: Pick<AiSwitches, 'validator'>,
    private readonly budget: BudgetGate,
    private readonly observer: ValidationObserver = { undecided: () => undefined },
  ) {}

  async created(news: Created): Promise<void> {
    // Auto-approval decided already; the catalog would drop a decision on an approved instance.
    if (news.auto_approved || news.state !== 'PENDING') return;
    const processor = await this.processors.active(news.service.id, 'change_instance_validator');
    if (!processor) return;
    if (!this.switches.validator()) {
      this.logger.info(
        { change_instance_id: news.change_instance_id },
        'change instance validator switched off (show_ai_validator): the instance waits for its owner',
      );
      return;
    }
    const exhausted = await this.budget.exhausted(news.service.id);
    if (exhausted !== null) {
      // As with the validator off: the instance waits for its owner (docs/decisions/0046).
      this.logger.info(
        { change_instance_id: news.change_instance_id, reason: exhausted },
        'validator not asked',
      );
      return;
    }
    const requestId = `${VALIDATOR_REQUEST_PREFIX}${news.change_instance_id}`;
    const request = generateRequest({
      requestId,
      processor,
      user: [
        `Change Instance ${news.change_instance_id} of Service Item ${news.service_item_id}, ` +
          `submitted by ${news.consumer_name} to the Service "${news.service.name}". ` +
          `Approve or reject this declaration:\n${news.declaration_json}`,
      ],
      schema: VALIDATOR_SCHEMA,
      replyKind: 'validation',
      correlationId: `change-instance-${news.change_instance_id}`,
    });
    const inserted = await this.store.insert(
      {
        _id: news.change_instance_id,
        service_id: news.service.id,
        processor_id: processor._id,
        request_id: requestId,
        state: 'requested',
        decision: null,
        reasons: [],
        error: null,
        created_at: new Date(),
        decided_at: null,
      },
      request,
    );
    if (inserted) this.eventsWritten();
  }

  async result(result: GenerateResult): Promise<void> {
    const id = Number(result.request_id.slice(VALIDATOR_REQUEST_PREFIX.length));
    if (!Number.isSafeInteger(id)) return;
    const decision = result.ok ? decisionOf(result.parsed_json ?? result.output) : null;
    const now = new Date();
    if (!decision) {
      const error = result.ok
        ? 'the reply is not a {decision, reasons} object'
        : `${result.error?.kind ?? 'error'}: ${result.error?.message ?? 'generation failed'}`;
      // No decision: the Service Owner decides by hand, as without a validator; the Change
      // Instance records why (the catalog owns it: told through this validation's outbox).
      const undecided = createEnvelope(
        events.changeInstanceValidationUndecided,
        { change_instance_id: id, reason: error, at: now.toISOString() },
        { source: SOURCE, correlationId: `change-instance-${id}`, id: `validation-undecided-${id}` },
      );
      if (await this.store.settle(id, { state: 'failed', error, decided_at: now }, [undecided])) {
        this.eventsWritten();
        this.observer.undecided(result.ok ? 'no_decision' : 'generation_failed');
        this.logger.warn({ change_instance_id: id, error }, 'change instance validator gave no decision');
      }
      return;
    }
    const event = createEnvelope(
      events.changeInstanceValidationDecided,
      { change_instance_id: id, ...decision },
      { source: SOURCE, correlationId: `change-instance-${id}`, id: `validation-decided-${id}` },
    );
    if (await this.store.settle(id, { state: 'decided', ...decision, decided_at: now }, [event]))
      this.eventsWritten();
  }
}

/** The validator's reply, checked against its internal schema's shape; null when it is not one. */
export function decisionOf(text: string | null): Pick<Decision, 'decision' | 'reasons'> | null {
  if (text === null) return null;
  let reply: unknown;
  try {
    reply = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof reply !== 'object' || reply === null) return null;
  const { decision, reasons } = reply as Record<string, unknown>;
  if (decision !== 'approve' && decision !== 'reject') return null;
  if (!Array.isArray(reasons) || !reasons.every((reason) => typeof reason === 'string')) return null;
  return { decision, reasons: reasons.slice(0, 50).map((reason) => reason.slice(0, 2000)) };
}
