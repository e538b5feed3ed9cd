import Ajv, { type ValidateFunction } from 'ajv';
import {
  approximateNumbers,
  GEN_UI_COMPONENTS,
  GEN_UI_MAX_COMPONENTS,
  GEN_UI_STYLES,
  holdsExactNumbers,
  type GenUiComponentSpec,
  type GenUiStyleName,
} from '@pack/contracts';

/** Whether a reply's `gen_ui` can be rendered; `problems` name the place (`components.2.style.color`). */
export interface GenUiCheck {
  valid: boolean;
  problems: string[];
}

type Registry = Record<string, GenUiComponentSpec>;

const COMPONENT_KEYS = new Set(['type', 'props', 'style']);
const ajv = new Ajv({ strict: false, allErrors: true });
const compiled = new WeakMap<object, ValidateFunction>();

function propValidator(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks generative UI output against the component registry (spec 2.4 rules 1 and 4): only
 * supported component types, their props with valid values, and their styles with the theme's
 * values. An invalid reply is still stored, flagged `gen_ui_valid: false`, so a client falls
 * back to the standard renderer.
 */
export function checkGenUi(reply: unknown, registry: Registry = GEN_UI_COMPONENTS): GenUiCheck {
  // A number kept as written (`50.0`, docs/decisions/0039) is still a number to the prop checks.
  const genUi = holdsExactNumbers(reply) ? approximateNumbers(reply) : reply;
  const problems: string[] = [];
  if (!isObject(genUi) || !Array.isArray(genUi.components)) {
    return { valid: false, problems: ['gen_ui must be an object with a components array'] };
  }
  for (const key of Object.keys(genUi))
    if (key !== 'components') problems.push(`${key}: not part of generative UI output`);
  const components: unknown[] = genUi.components;
  if (components.length === 0) problems.push('components: at least one component is needed');
  if (components.length > GEN_UI_MAX_COMPONENTS)
    problems.push(`components: at most ${GEN_UI_MAX_COMPONENTS} components are rendered`);
  components.forEach((component, index) =>
    checkComponent(component, `components.${index}`, registry, problems),
  );
  return { valid: problems.length === 0, problems };
}

function checkComponent(component: unknown, at: string, registry: Registry, problems: string[]): void {
  if (!isObject(component)) {
    problems.push(`${at}: must be an object {type, props, style}`);
    return;
  }
  const type = component.type;
  if (typeof type !== 'string' || !Object.hasOwn(registry, type)) {
    problems.push(`${at}.type: unsupported component ${JSON.stringify(type)}`);
    return;
  }
  const spec = registry[type]!;
  for (const key of Object.keys(component))
    if (!COMPONENT_KEYS.has(key)) problems.push(`${at}.${key}: not part of a ${type} component`);
  checkProps(component.props, spec, `${at}.props`, type, problems);
  if (component.style !== undefined) checkStyle(component.style, spec, `${at}.style`, type, problems);
}

function checkProps(props: unknown, spec: GenUiComponentSpec, at: string, type: string, problems: string[]) {
  const given = props === undefined ? {} : props;
  if (!isObject(given)) {
    problems.push(`${at}: must be an object`);
    return;
  }
  for (const [name, prop] of Object.entries(spec.props)) {
    if (!Object.hasOwn(given, name)) {
      if (prop.required) problems.push(`${at}.${name}: required by ${type}`);
      continue;
    }
    const validate = propValidator(prop.schema);
    if (!validate(given[name]))
      for (const error of validate.errors ?? [])
        problems.push(
          `${at}.${name}${error.instancePath.replace(/\//g, '.')}: ${error.message ?? 'is invalid'}`,
        );
  }
  for (const name of Object.keys(given))
    if (!Object.hasOwn(spec.props, name)) problems.push(`${at}.${name}: ${type} has no such prop`);
}

function checkStyle(style: unknown, spec: GenUiComponentSpec, at: string, type: string, problems: string[]) {
  if (!isObject(style)) {
    problems.push(`${at}: must be an object`);
    return;
  }
  const allowed: readonly string[] = spec.styles;
  for (const [name, value] of Object.entries(style)) {
    if (!allowed.includes(name)) {
      problems.push(`${at}.${name}: ${type} does not take this style`);
      continue;
    }
    const values: readonly string[] = GEN_UI_STYLES[name as GenUiStyleName].values;
    if (typeof value !== 'string' || !values.includes(value))
      problems.push(`${at}.${name}: must be one of ${values.join(', ')}`);
  }
}
