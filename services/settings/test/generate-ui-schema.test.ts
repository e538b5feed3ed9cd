import Ajv from 'ajv';
import { buildGenUiCatalogSchema, type JsonSchema } from '@pack/contracts';
import { SETTINGS, SettingsHarness, startSettings, admin, consumer, owner } from './harness';

/** The components of the generative UI registry, written out. */
const COMPONENT_TYPES = [
  'heading',
  'text',
  'alert',
  'key_value',
  'table',
  'list',
  'code',
  'badge',
  'metric',
  'progress',
  'link',
  'divider',
];

const GENERATE = `${SETTINGS}generate_ui_schema/`;
type Catalog = {
  properties: {
    components: {
      items: {
        anyOf: {
          properties: { type: { const: string }; style: { properties: Record<string, { enum: string[] }> } };
        }[];
      };
    };
  };
};
const typesOf = (schema: unknown) =>
  (schema as Catalog).properties.components.items.anyOf.map((b) => b.properties.type.const);

describe('Generate Schema (generative UI catalog)', () => {
  // A service of its own per test: each test starts from settings nobody has written.
  let settings: SettingsHarness;
  beforeEach(async () => {
    settings = await startSettings();
  });
  afterEach(async () => {
    await settings.stop();
  });
  const generate = async () => {
    const answer = await settings.as(admin, 'POST', GENERATE);
    expect(answer.status).toBe(200);
    return answer.body.ai_integration.generative_ui_catalog_schema as Catalog;
  };

  it('is null until generated', async () => {
    expect((await settings.get()).body.ai_integration.generative_ui_catalog_schema).toBeNull();
  });

  it('refuses service owners and consumers with 403, and stores nothing', async () => {
    for (const principal of [owner, consumer])
      expect((await settings.as(principal, 'POST', GENERATE)).status).toBe(403);
    expect((await settings.as(null, 'POST', GENERATE)).status).toBe(401);
    expect(await settings.versionDocuments()).toEqual([]);
  });

  it('builds the catalog from the component registry and stores it as JSON text', async () => {
    const { status, body, headers } = await settings.as(admin, 'POST', GENERATE);
    expect(status).toBe(200);
    expect(headers.get('x-settings-version')).toBe('1');
    const schema = body.ai_integration.generative_ui_catalog_schema as JsonSchema;
    expect(schema).toEqual(buildGenUiCatalogSchema());
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(typesOf(schema)).toEqual(COMPONENT_TYPES);
    expect((await settings.get(consumer)).body.ai_integration.generative_ui_catalog_schema).toEqual(schema);

    const [stored] = await settings.versionDocuments();
    const text = stored!.groups!.ai_integration!.generative_ui_catalog_schema;
    expect(typeof text).toBe('string');
    expect(JSON.parse(text as string)).toEqual(schema);
    expect(stored!.action).toBe('generate_ui_schema');
    expect(stored!.changes).toEqual([{ field: 'ai_integration.generative_ui_catalog_schema' }]);
  });

  it('lets an administrator limit component types and styles, and the LLM output is held to the edit', async () => {
    const edited = structuredClone(await generate());
    const branches = edited.properties.components.items.anyOf.filter((b) =>
      ['heading', 'text'].includes(b.properties.type.const),
    );
    branches[0]!.properties.style.properties.color!.enum = ['default', 'muted'];
    edited.properties.components.items.anyOf = branches;

    const patched = await settings.patch({ ai_integration: { generative_ui_catalog_schema: edited } });
    expect(patched.status).toBe(200);
    const stored = (await settings.get()).body.ai_integration.generative_ui_catalog_schema;
    expect(typesOf(stored)).toEqual(['heading', 'text']);

    const validate = new Ajv().compile(stored as JsonSchema);
    expect(
      validate({ components: [{ type: 'heading', props: { text: 'Plan' }, style: { color: 'muted' } }] }),
    ).toBe(true);
    expect(
      validate({ components: [{ type: 'heading', props: { text: 'Plan' }, style: { color: 'danger' } }] }),
    ).toBe(false);
    expect(validate({ components: [{ type: 'table', props: { columns: ['a'], rows: [] } }] })).toBe(false);
  });

  it('refuses an edit that is not a valid JSON Schema and keeps the previous one', async () => {
    const before = await generate();
    for (const invalid of [
      { type: 'objekt' },
      { $ref: '#/definitions/nowhere' },
      { properties: { a: { pattern: '(' } } },
    ]) {
      const { status, body } = await settings.patch({
        ai_integration: { generative_ui_catalog_schema: invalid },
      });
      expect(status).toBe(400);
      expect(Object.keys(body.errors)).toEqual(['ai_integration.generative_ui_catalog_schema']);
    }
    expect((await settings.get()).body.ai_integration.generative_ui_catalog_schema).toEqual(before);
  });

  it('generating again replaces the edit with the full registry; null clears it', async () => {
    const edited = structuredClone(await generate());
    edited.properties.components.items.anyOf = edited.properties.components.items.anyOf.slice(0, 1);
    expect((await settings.patch({ ai_integration: { generative_ui_catalog_schema: edited } })).status).toBe(
      200,
    );
    const again = await settings.as(admin, 'POST', GENERATE);
    expect(typesOf(again.body.ai_integration.generative_ui_catalog_schema)).toEqual(COMPONENT_TYPES);
    const cleared = await settings.patch({ ai_integration: { generative_ui_catalog_schema: null } });
    expect(cleared.body.ai_integration.generative_ui_catalog_schema).toBeNull();
    const audit = await settings.as(admin, 'GET', `${SETTINGS}audit/`);
    expect(audit.body.results.map((entry: { action: string }) => entry.action)).toEqual([
      'update',
      'generate_ui_schema',
      'update',
      'generate_ui_schema',
    ]);
  });
});
