import { checkGenUi, schemaProblems } from './check';

const valid = {
  components: [
    { type: 'heading', props: { text: 'Plan', level: 2 }, style: { color: 'primary' } },
    { type: 'key_value', props: { items: [{ label: 'vCPUs', value: 4 }] } },
    { type: 'table', props: { columns: ['a'], rows: [['x'], [null]] } },
    { type: 'divider' },
  ],
};

describe('which generative UI replies the console draws', () => {
  it('draws a reply of registry components, props and style values', () => {
    const verdict = checkGenUi(valid, true);
    expect(verdict.ok).toBe(true);
    if (verdict.ok)
      expect(verdict.components.map((component) => component.type)).toEqual([
        'heading',
        'key_value',
        'table',
        'divider',
      ]);
  });

  it('falls back for a reply the pipeline marked invalid, or one that is not {components: [...]}', () => {
    expect(checkGenUi(valid, false)).toMatchObject({ ok: false, reason: 'invalid' });
    expect(checkGenUi({ items: [] }, null)).toMatchObject({ ok: false, reason: 'invalid' });
    expect(checkGenUi({ components: [] }, true)).toMatchObject({ ok: false, reason: 'invalid' });
  });

  it('falls back for an unsupported component type, prop or style value', () => {
    expect(checkGenUi({ components: [{ type: 'iframe', props: { src: 'x' } }] }, true)).toMatchObject({
      ok: false,
      reason: 'unsupported',
      problems: ['components.0.type: "iframe" is not a supported component'],
    });
    expect(
      checkGenUi({ components: [{ type: 'text', props: { text: 'a', html: '<b>' } }] }, true),
    ).toMatchObject({ reason: 'unsupported' });
    expect(
      checkGenUi({ components: [{ type: 'text', props: { text: 'a' }, style: { color: 'red' } }] }, true),
    ).toMatchObject({
      reason: 'unsupported',
    });
    expect(
      checkGenUi({ components: [{ type: 'divider', style: { font_size: 'large' } }] }, true),
    ).toMatchObject({ reason: 'unsupported' });
  });

  it('falls back for props of the wrong kind or missing ones', () => {
    expect(
      checkGenUi({ components: [{ type: 'alert', props: { severity: 'fatal', message: 'm' } }] }, true),
    ).toMatchObject({
      reason: 'invalid',
      problems: ['components.0.props.severity: must be one of info, success, warning, error'],
    });
    expect(
      checkGenUi({ components: [{ type: 'link', props: { text: 'x', url: 'javascript:alert(1)' } }] }, true),
    ).toMatchObject({
      reason: 'invalid',
    });
    expect(checkGenUi({ components: [{ type: 'metric', props: { label: 'l' } }] }, true)).toMatchObject({
      problems: ['components.0.props.value: is missing'],
    });
  });

  it('checks the JSON Schema subset of the registry', () => {
    expect(schemaProblems(5, { type: 'integer', minimum: 1, maximum: 4 }, 'x')).toEqual(['x: is above 4']);
    expect(schemaProblems([1, 'a'], { type: 'array', items: { type: 'string' } }, 'x')).toEqual([
      'x.0: must be a string',
    ]);
    expect(schemaProblems(true, { anyOf: [{ type: 'string' }, { type: 'boolean' }] }, 'x')).toEqual([]);
  });
});
