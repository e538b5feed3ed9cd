/**
 * The lists of bench/scale: for every list endpoint, its collection, the indexes its service
 * creates, the documents it holds (the fields its queries touch, plus some text), and the
 * filter, sort and projection its repository passes to findPage (packages/db), as written in
 * the repository named next to it.
 */
import type { mongo } from 'mongoose';

export interface Filter {
  name: string;
  query: mongo.Document;
}

export interface List {
  endpoint: string;
  collection: string;
  indexes: mongo.IndexSpecification[];
  sort: mongo.Sort;
  projection?: mongo.Document;
  unique?: boolean; // the sort is a total order without _id (findPage's option)
  make: (id: number) => mongo.Document;
  filters: Filter[];
}

const STATES = ['PENDING', 'PROCESSING', 'READY', 'REJECTED', 'COMPLETED', 'FAILED'];
const at = (id: number) => new Date(Date.UTC(2026, 0, 1) + id * 60_000);
const text = (id: number) => `record ${id} `.padEnd(160, 'lorem ipsum ');
const all: Filter = { name: 'all', query: {} };

export const LISTS: List[] = [
  {
    endpoint: 'GET /v1/catalog/change_instances/', // catalog-repository listChangeInstances
    collection: 'change_instances',
    indexes: [
      { state: 1, _id: -1 },
      { service_id: 1, _id: -1 },
      { service_item_id: 1, _id: -1 },
      { consumer_id: 1, _id: -1 },
    ],
    sort: { _id: -1 },
    make: (id) => ({
      _id: id,
      service_id: id % 50,
      service_item_id: id % 5000,
      consumer_id: id % 200,
      state: STATES[id % STATES.length],
      version: 3,
      steps: [{ name: 'submit', at: at(id) }],
      reasons: [],
      created_at: at(id),
      updated_at: at(id),
      note: text(id),
    }),
    filters: [
      all,
      { name: 'state', query: { state: 'COMPLETED' } },
      { name: 'service', query: { service_id: 7 } },
      { name: 'consumer', query: { consumer_id: 42 } },
      { name: 'owner scope', query: { service_id: { $in: [3, 7, 11] } } },
      { name: 'service+state', query: { service_id: 7, state: 'REJECTED' } },
    ],
  },
  {
    endpoint: 'GET /v1/catalog/service_items/', // catalog-repository listServiceItems
    collection: 'service_items',
    indexes: [
      { service_id: 1, _id: -1 },
      { consumer_id: 1, _id: -1 },
      { consumer_id: 1, service_id: 1 },
    ],
    sort: { _id: -1 },
    make: (id) => ({
      _id: id,
      service_id: id % 50,
      consumer_id: Math.floor(id / 50),
      consumer_name: `consumer ${Math.floor(id / 50)}`,
      created_at: at(id),
    }),
    filters: [
      all,
      { name: 'service', query: { service_id: 7 } },
      { name: 'consumer', query: { consumer_id: 42 } },
    ],
  },
  {
    endpoint: 'GET /v1/catalog/services/', // service-repository listServices
    collection: 'services',
    indexes: [{ owner_id: 1 }, { name: 1 }],
    sort: { _id: 1 },
    make: (id) => ({
      _id: id,
      name: `service-${id}`,
      description: text(id),
      owner_id: id % 100,
      owner_name: `owner ${id % 100}`,
      auto_approval: false,
      version: 1,
      created_at: at(id),
      updated_at: at(id),
    }),
    filters: [all, { name: 'owner', query: { owner_id: 42 } }],
  },
  {
    endpoint: 'GET /v1/catalog/service_owners/', // catalog-repository listServiceOwners
    collection: 'service_owners',
    indexes: [],
    sort: { _id: 1 },
    make: (id) => ({
      _id: id,
      username: `owner${id}`,
      allow_service_creation: true,
      created_at: at(id),
      updated_at: at(id),
    }),
    filters: [all],
  },
  {
    endpoint: 'GET /v1/tokens/', // gateway token-repository list (then its users by _id $in)
    collection: 'api_tokens',
    indexes: [{ token_hash: 1 }, { user_id: 1 }],
    sort: { _id: 1 },
    projection: { token_hash: 0 },
    make: (id) => ({
      _id: id,
      token_hash: `hash-${id}`.padEnd(64, '0'),
      user_id: id,
      name: `token ${id}`,
      scopes: ['admin'],
      created_at: at(id),
      revoked: false,
    }),
    filters: [all],
  },
  {
    endpoint: 'GET /v1/llm/models/', // llm-model-repository list
    collection: 'llm_models',
    indexes: [{ name: 1 }, { _outbox_pending: 1 }, { _id: 1, deleted: 1 }],
    sort: { _id: 1 },
    projection: { api_key: 0, _outbox: 0 },
    make: (id) => ({
      _id: id,
      name: `model-${id}`,
      provider: 'openai',
      model: 'gpt-4o-mini',
      api_key: { iv: 'x', data: text(id) },
      deleted: id % 10 === 0,
      version: 1,
      created_at: at(id),
    }),
    filters: [{ name: 'live', query: { deleted: { $ne: true } } }],
  },
  {
    endpoint: 'GET /v1/processors/', // processor-repository list
    collection: 'ai_processors',
    indexes: [{ service_id: 1, deleted: 1, kind: 1, _id: 1 }, { _outbox_pending: 1 }, { deleted: 1, _id: 1 }],
    sort: { _id: 1 },
    projection: { _outbox: 0, _outbox_pending: 0 },
    make: (id) => ({
      _id: id,
      service_id: id % 50,
      kind: ['VALIDATOR', 'OPTIMIZER', 'EXECUTOR'][id % 3],
      name: `processor ${id}`,
      llm_model_id: id % 20,
      prompt: text(id),
      deleted: false,
      version: 1,
      created_at: at(id),
    }),
    filters: [
      { name: 'live', query: { deleted: false } },
      { name: 'service', query: { deleted: false, service_id: 7 } },
      {
        name: 'owner scope+kind',
        query: { deleted: false, service_id: { $in: [3, 7, 11] }, kind: 'EXECUTOR' },
      },
    ],
  },
  {
    endpoint: 'GET /v1/external/serviceowner/pack/pipelines/', // pipeline-repository listLatest
    collection: 'pipelines',
    indexes: [
      { origin: 1 },
      { service_item_id: 1, run: -1 },
      { _outbox_pending: 1 },
      { watched: 1 },
      { latest: 1, _id: -1 },
      { latest: 1, status: 1, _id: -1 },
      { service_id: 1, latest: 1, status: 1, _id: -1 },
    ],
    sort: { _id: -1 },
    projection: {
      _outbox: 0,
      _outbox_pending: 0,
      watched: 0,
      declaration_json: 0,
      execution_context: 0,
      ...Object.fromEntries(
        ['CONFIG', 'VERIFY', 'EXECUTION'].flatMap((stage) =>
          ['pack_data_json', 'gen_ui_json'].map((field) => [`stages.${stage}.${field}`, 0]),
        ),
      ),
    },
    // Two runs per item (ids 2n-1, 2n): the later one is the latest; one in five latest runs failed.
    make: (id) => ({
      _id: id,
      origin: `trigger:${id}`,
      service_item_id: Math.ceil(id / 2),
      service_id: Math.ceil(id / 2) % 50,
      run: 2 - (id % 2),
      latest: id % 2 === 0,
      status: ['done', 'failed', 'running', 'waiting', 'done'][Math.ceil(id / 2) % 5],
      declaration_json: text(id),
      stages: Object.fromEntries(
        ['CONFIG', 'VERIFY', 'EXECUTION'].map((stage) => [
          stage,
          { state: 'OK', processor_id: id % 20, pack_data_json: text(id), cost: '0.000006' },
        ]),
      ),
      costs: ['0.000006', '0.000006'],
      watched: false,
      created_at: at(id),
      updated_at: at(id),
    }),
    filters: [
      { name: 'latest', query: { latest: true } },
      { name: 'latest+status', query: { latest: true, status: 'failed' } },
      { name: 'owner scope', query: { latest: true, service_id: { $in: [3, 7, 11] } } },
      {
        name: 'owner scope+status',
        query: { latest: true, service_id: { $in: [3, 7, 11] }, status: 'failed' },
      },
    ],
  },
  {
    endpoint: 'GET /v1/settings/history/', // settings-repository history
    collection: 'general_settings',
    indexes: [{ _outbox_pending: 1 }],
    sort: { _id: -1 },
    projection: { groups: 0, _outbox: 0, _outbox_pending: 0 },
    make: (id) => ({
      _id: id,
      at: at(id),
      actor: 'admin',
      action: 'update',
      changed_groups: ['general'],
      groups: { general: { note: text(id) } },
    }),
    filters: [all],
  },
  {
    endpoint: 'GET /v1/webhooks/', // webhook-repository list
    collection: 'webhooks',
    indexes: [{ service_id: 1 }, { owner_id: 1, _id: 1 }],
    sort: { _id: 1 },
    make: (id) => ({
      _id: id,
      service_id: id % 50,
      owner_id: id % 100,
      url: `http://127.0.0.1:9/hook/${id}`,
      secret: { iv: 'x', data: 'y' },
      active: true,
      version: 1,
      created_at: at(id),
    }),
    filters: [all, { name: 'owner', query: { owner_id: 42 } }],
  },
  {
    endpoint: 'GET /v1/webhooks/{id}/responses/', // response-repository list
    collection: 'webhook_responses',
    indexes: [
      { webhook_id: 1, seq: -1 },
      { state: 1, due_at: 1 },
      { state: 1, lease_until: 1 },
    ],
    sort: { seq: -1 },
    unique: true,
    make: (id) => ({
      _id: `r${id}`,
      webhook_id: id % 2 === 0 ? 1 : 2 + (id % 40),
      seq: id,
      state: ['DELIVERED', 'FAILED', 'SCHEDULED'][id % 3],
      due_at: at(id),
      lease_until: null,
      status: 200,
      body: text(id),
      created_at: at(id),
    }),
    filters: [{ name: 'webhook', query: { webhook_id: 1 } }],
  },
  {
    endpoint: 'GET /v1/webhooks/responses/', // response-repository listAcross (same documents)
    collection: 'webhook_responses',
    indexes: [{ created_at: -1, _id: -1, webhook_id: 1, state: 1 }],
    sort: { created_at: -1, _id: -1 },
    make: () => ({}),
    filters: [
      { name: 'owner scope', query: { webhook_id: { $in: [1, 3, 5] } } },
      { name: 'owner scope+state', query: { webhook_id: { $in: [1, 3, 5] }, state: 'FAILED' } },
    ],
  },
];
