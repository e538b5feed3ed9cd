import { GEN_UI_CATALOG_SCHEMA_MAX_BYTES, jsonBytes } from '@pack/contracts';
import { type CallResult, storedCollection, waitFor } from '@pack/testkit';
import {
  expectRefused,
  modelKnownToOrchestrator,
  modelOnFakeProvider,
  stackAtRest,
  startStack,
  type Stack,
} from '../stack';

const MODELS = '/v1/ai/llm_models/';
const SERVICES = '/v1/catalog/services/';
const SETTINGS = '/v1/core/general_settings/';
const WEBHOOKS = '/v1/external/serviceowner/webhooks/';

/** Text no service can keep as a database string, and what the 400 says about it. */
const BAD_TEXTS = [
  ['a NUL character', 'before\u0000after', /NUL character/],
  ['a lone surrogate', 'before\ud800after', /unpaired surrogate/],
] as const;

type Caller = 'admin' | 'owner' | 'consumer';

/** One request whose only fault is `text` in `field`. */
interface Case {
  method: string;
  path: string;
  as: Caller;
  body: (text: string) => unknown;
  field: string;
  /** Reads (as the admin) that must answer the same before and after. */
  reads: string[];
  /** What the 400 says, when another check of the field refuses the text first. */
  message?: RegExp;
}
type CaseArgs = [
  as: Caller,
  method: string,
  path: string,
  reads: string[],
  field: string,
  body: (text: string) => unknown,
  message?: RegExp,
];

/**
 * Text fields every service keeps as database strings, through the gateway: a NUL character
 * (which FerretDB on PostgreSQL cannot store: these were 500s) and a lone UTF-16 surrogate (which
 * has no UTF-8 form: stored as U+FFFD, so reads did not return what was written) answer 400
 * problem+json naming the field, and nothing is stored. The requests are otherwise valid.
 */
describe('text kept as database strings, through the gateway', () => {
  let stack: Stack;
  const tokens = {} as Record<Caller, string>;
  let model: number;
  let service: number;
  let changeInstance: number;
  let webhook: number;

  /** Runs `request` and expects a 400 naming exactly `field`, no database and no read changed. */
  async function refused(
    serviceName: string,
    request: () => Promise<CallResult>,
    field: string,
    reads: string[],
  ) {
    const read = () => Promise.all(reads.map(async (path) => (await stack.call('GET', path)).body));
    const readBefore = await read();
    const answer = await expectRefused(stack.service(serviceName), request, 400, [field]);
    expect(await read()).toEqual(readBefore);
    return answer;
  }

  beforeAll(async () => {
    stack = await startStack();
    tokens.admin = stack.adminToken;
    [tokens.owner, tokens.consumer] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    model = await modelOnFakeProvider(stack, 'Text model', 'https://llm.example.com', 'text-key-0000');
    const owned = await stack.call('POST', SERVICES, { token: tokens.owner, body: { name: 'Text service' } });
    expect(owned.status).toBe(201);
    service = owned.body.id;
    const submitted = await stack.call('POST', `${SERVICES}${service}/declarations/`, {
      token: tokens.consumer,
      body: { declaration: { size: 'S' } },
    });
    expect(submitted.status).toBe(201);
    changeInstance = submitted.body.change_instance.id;
    await modelKnownToOrchestrator(stack, model);
    await waitFor(
      async () =>
        (await storedCollection(stack.service('pipeline-orchestrator'), 'services')).some(
          ({ _id }) => _id === service,
        ),
      { what: `the orchestrator to learn Service ${service}` },
    );
    // Fires only at APPROVED, which nothing here reaches; the target is never called.
    const hooked = await waitFor(
      async () => {
        const answer = await stack.call('POST', WEBHOOKS, {
          token: tokens.owner,
          body: {
            name: 'Text hook',
            service,
            target_url: 'http://127.0.0.1:9/never',
            change_instance_state: 'APPROVED',
          },
        });
        return answer.status === 201 && answer;
      },
      { what: 'the dispatcher to learn the Service' },
    );
    webhook = hooked.body.id;
    // Every event of the setup handled: no database changes while the cases run.
    await stackAtRest(stack);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** The cases, once the setup made the resources they refer to. */
  const cases = (): Record<string, Case[]> => {
    const ask = (...[as, method, path, reads, field, body, message]: CaseArgs): Case => {
      return { as, method, path, reads, field, body, message };
    };
    const [owners, processors, tokenList] = [
      '/v1/catalog/service_owners/',
      '/v1/ai/processors/',
      '/v1/core/tokens/',
    ];
    const [ownService, ownModel, ownHook] = [
      `${SERVICES}${service}/`,
      `${MODELS}${model}/`,
      `${WEBHOOKS}${webhook}/`,
    ];
    const item = `/v1/catalog/change_instances/${changeInstance}/`;
    const vendor1 = (name: string, extra: Record<string, string> = {}) => ({
      name,
      provider: 'vendor1',
      model_name: 'm',
      extra_data: { api_key: 'text-key-0000', base_url: 'https://llm.example.com/v1', ...extra },
    });
    const hook = (extra: Record<string, string>) => ({
      name: 'Text hook 2',
      service,
      target_url: 'http://127.0.0.1:9/never',
      change_instance_state: 'APPROVED',
      ...extra,
    });
    const setting = (group: string, field: string, value: (text: string) => string) =>
      ask('admin', 'PATCH', SETTINGS, [SETTINGS, `${SETTINGS}audit/`], `${group}.${field}`, (text) => ({
        [group]: { [field]: value(text) },
      }));
    const newUser = (text: string) => ({ username: text, role: 'consumer' });
    return {
      gateway: [ask('admin', 'POST', tokenList, [tokenList], 'username', newUser, /letters, digits/)],
      catalog: [
        ask('owner', 'POST', SERVICES, [SERVICES], 'name', (text) => ({ name: text })),
        ask('owner', 'POST', SERVICES, [SERVICES], 'description', (text) => ({
          name: 'T',
          description: text,
        })),
        ask('owner', 'PATCH', ownService, [ownService], 'description', (text) => ({ description: text })),
        ask('admin', 'PUT', `${owners}4242/`, [owners], 'username', (text) => ({
          username: text,
          allow_service_creation: false,
        })),
        ask('owner', 'PATCH', item, [item], 'reasons.1', (text) => ({
          state: 'REJECTED',
          reasons: ['big', text],
        })),
      ],
      'llm-gateway': [
        ask('admin', 'POST', MODELS, [MODELS], 'name', (text) => vendor1(text)),
        ask('admin', 'POST', MODELS, [MODELS], 'extra_data.base_url', (text) =>
          vendor1('T', { base_url: `https://llm.example.com/${text}` }),
        ),
        ask('admin', 'POST', MODELS, [MODELS], 'extra_data.api_key', (text) =>
          vendor1('T', { api_key: `k${text}` }),
        ),
        ask('admin', 'PATCH', ownModel, [ownModel], 'prompt', (text) => ({ prompt: text })),
      ],
      settings: [
        setting('global_banner', 'message', (text) => text),
        setting('ldap', 'BIND_DN', (text) => `cn=${text}`),
        setting('smtp', 'EMAIL_HOST_PASSWORD', (text) => text),
        setting('feedback', 'feedback_link', (text) => `https://feedback.example.com/${text}`),
      ],
      'webhook-dispatcher': [
        ask('owner', 'POST', WEBHOOKS, [WEBHOOKS], 'name', (text) => hook({ name: text })),
        ask('owner', 'POST', WEBHOOKS, [WEBHOOKS], 'target_url', (text) =>
          hook({ target_url: `http://127.0.0.1:9/${text}` }),
        ),
        ask('owner', 'POST', WEBHOOKS, [WEBHOOKS], 'authorization', (text) =>
          hook({ authorization: `B ${text}` }),
        ),
        ask('owner', 'PATCH', ownHook, [ownHook], 'description', (text) => ({ description: text })),
      ],
      'pipeline-orchestrator': [
        ask('owner', 'POST', processors, [processors], 'name', (text) => ({
          name: text,
          service,
          kind: 'config',
          llm_model: model,
        })),
      ],
    };
  };

  it.each(['gateway', 'catalog', 'llm-gateway', 'settings', 'webhook-dispatcher', 'pipeline-orchestrator'])(
    '%s: a NUL character or a lone surrogate answers 400 naming the field, nothing stored',
    async (serviceName) => {
      for (const { method, path, as, body, field, reads, message } of cases()[serviceName]!) {
        for (const [, text, says] of BAD_TEXTS) {
          const request = () => stack.call(method, path, { token: tokens[as], body: body(text) });
          const answer = await refused(serviceName, request, field, reads);
          expect(answer.body.errors[field].join(' ')).toMatch(message ?? says);
        }
      }
    },
  );

  it('settings: counts the catalog schema limit in UTF-8 bytes of JSON, not characters', async () => {
    const schemaOf = (description: string) => ({ type: 'object', description });
    const room = GEN_UI_CATALOG_SCHEMA_MAX_BYTES - jsonBytes(schemaOf(''));
    // Two-byte characters one byte over the limit: about half as many characters as it allows.
    const over = schemaOf('é'.repeat(Math.ceil((room + 1) / 2)));
    expect(jsonBytes(over)).toBeGreaterThan(GEN_UI_CATALOG_SCHEMA_MAX_BYTES);
    expect(jsonBytes(over)).toBeLessThanOrEqual(GEN_UI_CATALOG_SCHEMA_MAX_BYTES + 2);
    const field = 'ai_integration.generative_ui_catalog_schema';
    const body = { ai_integration: { generative_ui_catalog_schema: over } };
    const answer = await refused('settings', () => stack.call('PATCH', SETTINGS, { body }), field, [
      SETTINGS,
    ]);
    expect(answer.body.errors[field]).toEqual([
      `must be at most ${GEN_UI_CATALOG_SCHEMA_MAX_BYTES} bytes of JSON`,
    ]);
  });
});
