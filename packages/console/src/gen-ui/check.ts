/**
 * Which generative UI replies the console renders as components (spec 2.4 rules 1-5): only the
 * component types, props and style values of the registry in @pack/contracts. The pipeline
 * flags invalid replies (`gen_ui_valid: false`); the console checks again before it renders,
 * since a reply is model output and the registry is what it can draw. Pure (check.spec.ts).
 */
import {
  GEN_UI_COMPONENTS,
  GEN_UI_MAX_COMPONENTS,
  GEN_UI_STYLES,
  type GenUiComponentSpec,
  type JsonSchema,
} from '@pack/contracts';

export type GenUiComponent = { type: string; props: Record<string, unknown>; style: Record<string, string> };
export type GenUiVerdict =
  | { ok: true; components: GenUiComponent[] }
  | { ok: false; reason: 'invalid' | 'unsupported'; problems: string[] };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const TYPE_CHECKS: Record<string, (value: unknown) => boolean> = {
  string: (value) => typeof value === 'string',
  number: (value) => typeof value === 'number' && Number.isFinite(value),
  integer: (value) => Number.isInteger(value),
  boolean: (value) => typeof value === 'boolean',
  null: (value) => value === null,
  array: Array.isArray,
  object: isObject,
};

/** Problems of `value` against the subset of JSON Schema the registry's props use. */
export function schemaProblems(value: unknown, schema: JsonSchema, at: string): string[] {
  if (Array.isArray(schema.anyOf)) {
    const fits = (schema.anyOf as JsonSchema[]).some(
      (branch) => schemaProblems(value, branch, at).length === 0,
    );
    return fits ? [] : [`${at}: is none of the allowed kinds`];
  }
  const type = schema.type as string | undefined;
  if (type && !TYPE_CHECKS[type]?.(value))
    return [`${at}: must be ${type === 'array' || type === 'object' ? `an ${type}` : `a ${type}`}`];
  const problems: string[] = [];
  if (Array.isArray(schema.enum) && !schema.enum.includes(value))
    problems.push(`${at}: must be one of ${schema.enum.join(', ')}`);
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength)
      problems.push(`${at}: is too short`);
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength)
      problems.push(`${at}: is too long`);
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value))
      problems.push(`${at}: has the wrong form`);
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum)
      problems.push(`${at}: is below ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum)
      problems.push(`${at}: is above ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems)
      problems.push(`${at}: has too few entries`);
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems)
      problems.push(`${at}: has too many entries`);
    if (isObject(schema.items))
      value.forEach((item, index) =>
        problems.push(...schemaProblems(item, schema.items as JsonSchema, `${at}.${index}`)),
      );
  }
  if (isObject(value) && isObject(schema.properties)) {
    const properties = schema.properties as Record<string, JsonSchema>;
    for (const name of (schema.required as string[] | undefined) ?? [])
      if (!(name in value)) problems.push(`${at}.${name}: is missing`);
    for (const [name, item] of Object.entries(value)) {
      if (properties[name]) problems.push(...schemaProblems(item, properties[name], `${at}.${name}`));
      else if (schema.additionalProperties === false) problems.push(`${at}.${name}: is not allowed`);
    }
  }
  return problems;
}

function componentProblems(component: unknown, at: string): { unsupported: string[]; invalid: string[] } {
  if (!isObject(component)) return { unsupported: [], invalid: [`${at}: must be an object`] };
  const type = component.type;
  if (typeof type !== 'string' || !Object.hasOwn(GEN_UI_COMPONENTS, type))
    return { unsupported: [`${at}.type: ${JSON.stringify(type)} is not a supported component`], invalid: [] };
  const spec: GenUiComponentSpec = GEN_UI_COMPONENTS[type as keyof typeof GEN_UI_COMPONENTS];
  const unsupported: string[] = [];
  const invalid: string[] = [];
  for (const key of Object.keys(component))
    if (!['type', 'props', 'style'].includes(key)) invalid.push(`${at}.${key}: is not allowed`);
  const props = component.props ?? {};
  if (!isObject(props)) invalid.push(`${at}.props: must be an object`);
  else
    for (const [name, value] of Object.entries(props)) {
      const prop = spec.props[name];
      if (!prop) unsupported.push(`${at}.props.${name}: is not a prop of ${type}`);
      else invalid.push(...schemaProblems(value, prop.schema, `${at}.props.${name}`));
    }
  if (isObject(props))
    for (const [name, prop] of Object.entries(spec.props))
      if (prop.required && !(name in props)) invalid.push(`${at}.props.${name}: is missing`);
  const style = component.style ?? {};
  if (!isObject(style)) invalid.push(`${at}.style: must be an object`);
  else
    for (const [name, value] of Object.entries(style)) {
      const allowed = (spec.styles as readonly string[]).includes(name)
        ? GEN_UI_STYLES[name as keyof typeof GEN_UI_STYLES]
        : undefined;
      if (!allowed || !(allowed.values as readonly unknown[]).includes(value))
        unsupported.push(`${at}.style.${name}: ${JSON.stringify(value)} is not a supported style of ${type}`);
    }
  return { unsupported, invalid };
}

/** Whether a stage's gen_ui can be drawn; `flaggedValid` is the pipeline's own verdict. */
export function checkGenUi(genUi: unknown, flaggedValid: boolean | null): GenUiVerdict {
  if (flaggedValid === false)
    return { ok: false, reason: 'invalid', problems: ['the pipeline marked the reply invalid'] };
  if (!isObject(genUi) || !Array.isArray(genUi.components))
    return { ok: false, reason: 'invalid', problems: ['gen_ui: must be {"components": [...]}'] };
  const list = genUi.components as unknown[];
  if (list.length === 0 || list.length > GEN_UI_MAX_COMPONENTS)
    return {
      ok: false,
      reason: 'invalid',
      problems: [`components: must hold 1 to ${GEN_UI_MAX_COMPONENTS} components`],
    };
  const found = list.map((component, index) => componentProblems(component, `components.${index}`));
  const unsupported = found.flatMap((entry) => entry.unsupported);
  const invalid = found.flatMap((entry) => entry.invalid);
  if (unsupported.length > 0) return { ok: false, reason: 'unsupported', problems: unsupported };
  if (invalid.length > 0) return { ok: false, reason: 'invalid', problems: invalid };
  return {
    ok: true,
    components: list.map((component) => {
      const { type, props, style } = component as {
        type: string;
        props?: Record<string, unknown>;
        style?: Record<string, string>;
      };
      return { type, props: props ?? {}, style: style ?? {} };
    }),
  };
}
