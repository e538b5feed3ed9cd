import { parseExactJson } from '@pack/contracts';
import { checkGenUi } from './gen-ui-check';

describe('generative UI output checked against the component registry', () => {
  it('accepts supported components with valid props and styles', () => {
    expect(
      checkGenUi({
        components: [
          { type: 'heading', props: { text: 'Namespace ready', level: 2 }, style: { color: 'success' } },
          { type: 'key_value', props: { items: [{ label: 'CPU', value: 8 }] }, style: { border: 'subtle' } },
          { type: 'divider' },
          { type: 'alert', props: { severity: 'info', message: 'Quota applied' } },
        ],
      }),
    ).toEqual({ valid: true, problems: [] });
  });

  it('refuses an unknown component type', () => {
    expect(
      checkGenUi({
        components: [
          { type: 'heading', props: { text: 'Hi' } },
          { type: 'chart', props: {} },
        ],
      }),
    ).toEqual({ valid: false, problems: ['components.1.type: unsupported component "chart"'] });
  });

  it('refuses a style the component does not take, and a value outside the theme', () => {
    expect(
      checkGenUi({
        components: [
          { type: 'alert', props: { severity: 'info', message: 'm' }, style: { color: 'danger' } },
          { type: 'text', props: { text: 't' }, style: { color: '#ff0000' } },
        ],
      }),
    ).toEqual({
      valid: false,
      problems: [
        'components.0.style.color: alert does not take this style',
        'components.1.style.color: must be one of default, muted, primary, success, warning, danger',
      ],
    });
  });

  it('refuses a bad prop value, a missing required prop and an unknown prop', () => {
    expect(
      checkGenUi({
        components: [
          { type: 'heading', props: { text: 'Title', level: 9 } },
          { type: 'alert', props: { message: 'no severity' } },
          { type: 'badge', props: { text: 'ok', onclick: 'alert(1)' } },
        ],
      }),
    ).toEqual({
      valid: false,
      problems: [
        'components.0.props.level: must be <= 4',
        'components.1.props.severity: required by alert',
        'components.2.props.onclick: badge has no such prop',
      ],
    });
  });

  it('refuses output that is not {components: [...]}', () => {
    expect(checkGenUi('<div>hello</div>')).toEqual({
      valid: false,
      problems: ['gen_ui must be an object with a components array'],
    });
    expect(checkGenUi({ components: [] }).problems).toEqual(['components: at least one component is needed']);
  });

  it('takes numbers kept as written (2.0, 1e1) as the numbers they are', () => {
    const genUi = parseExactJson(
      '{"components":[{"type":"heading","props":{"text":"Ready","level":2.0}},{"type":"key_value","props":{"items":[{"label":"CPU","value":1e1}]}}]}',
    );
    expect(checkGenUi(genUi)).toEqual({ valid: true, problems: [] });
  });
});
