import Ajv from 'ajv';
import {
  buildGenUiCatalogSchema,
  GEN_UI_COMPONENT_TYPES,
  GEN_UI_COMPONENTS,
  isGenUiComponentType,
} from './gen-ui';
import { jsonSchemaProblems } from './settings';

describe('generative UI catalog schema', () => {
  const schema = buildGenUiCatalogSchema();
  const validate = new Ajv({ allErrors: true }).compile(schema);

  it('is a valid draft-07 JSON Schema (ajv in its default strict mode compiles it)', () => {
    expect(jsonSchemaProblems(schema)).toEqual([]);
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
  });

  it('has one branch per registered component type', () => {
    const branches = (
      schema.properties as { components: { items: { anyOf: { properties: { type: { const: string } } }[] } } }
    ).components.items.anyOf;
    expect(branches.map((b) => b.properties.type.const)).toEqual(GEN_UI_COMPONENT_TYPES);
    expect(GEN_UI_COMPONENT_TYPES).toEqual(
      expect.arrayContaining(['heading', 'text', 'table', 'alert', 'code']),
    );
  });

  it('accepts components with their props and allowed styles', () => {
    const ok = validate({
      components: [
        { type: 'heading', props: { text: 'Result', level: 2 }, style: { color: 'primary' } },
        {
          type: 'table',
          props: {
            columns: ['name', 'size'],
            rows: [
              ['vm-1', 4],
              ['vm-2', null],
            ],
          },
        },
        { type: 'alert', props: { severity: 'warning', message: 'Quota nearly used' } },
        { type: 'divider' },
      ],
    });
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('refuses unknown component types, unknown props and style values outside the registry', () => {
    expect(validate({ components: [{ type: 'iframe', props: { src: 'https://x' } }] })).toBe(false);
    expect(validate({ components: [{ type: 'heading', props: { text: 'x', onclick: 'y' } }] })).toBe(false);
    expect(
      validate({ components: [{ type: 'heading', props: { text: 'x' }, style: { color: 'red' } }] }),
    ).toBe(false);
    expect(
      validate({ components: [{ type: 'heading', props: { text: 'x' }, style: { background: 'subtle' } }] }),
    ).toBe(false);
    expect(
      validate({ components: [{ type: 'link', props: { text: 'x', url: 'javascript:alert(1)' } }] }),
    ).toBe(false);
  });

  it('can be built from a reduced registry', () => {
    const reduced = buildGenUiCatalogSchema({ text: GEN_UI_COMPONENTS.text });
    const check = new Ajv().compile(reduced);
    expect(check({ components: [{ type: 'text', props: { text: 'hello' } }] })).toBe(true);
    expect(check({ components: [{ type: 'heading', props: { text: 'hello' } }] })).toBe(false);
    expect(isGenUiComponentType('text')).toBe(true);
    expect(isGenUiComponentType('toString')).toBe(false);
  });
});
