/**
 * Renders docs/reference/configuration.md from the services' environment schemas: each
 * `services/<name>/src/config.ts` exports one `*EnvSchema` (zod), which the service validates at
 * start. Types, defaults, bounds and whether a variable is required come from the schemas
 * themselves (zod's JSON Schema of their input); descriptions from the doc comments on the
 * schemas' properties, so the page cannot say something the code does not.
 * `test/docs/configuration-reference.test.ts` fails while the committed page is stale.
 *
 * `pnpm docs:config` writes the page.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import ts from 'typescript';

const REPO = path.resolve(__dirname, '..');
export const CONFIG_REFERENCE_FILE = path.join(REPO, 'docs/reference/configuration.md');

/** The part of zod used here: its JSON Schema of a schema's input. */
interface Zod {
  toJSONSchema(schema: unknown, options: { io: 'input'; unrepresentable: 'any' }): unknown;
}
// The schemas' own zod (the root package has none of its own): one instance, so its JSON Schema
// conversion knows their types.
const { z } = createRequire(require.resolve('@pack/config'))('zod') as { z: Zod };
const load = createRequire(__filename);

/** Files whose object literals declare environment variables, besides the services' config.ts. */
const SHARED_SOURCES = ['packages/config/src/index.ts', 'packages/secrets/src/key-ring.ts'];

interface JsonSchemaProperty {
  type?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  format?: string;
}

interface Variable {
  name: string;
  /** Per service: its JSON Schema, and whether the service requires the variable. */
  services: Map<string, { schema: JsonSchemaProperty; required: boolean }>;
}

/** The doc comment of every UPPER_CASE property assigned in a file, by name. */
function docComments(file: string): Map<string, string> {
  const source = ts.createSourceFile(
    file,
    readFileSync(path.join(REPO, file), 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const found = new Map<string, string>();
  const visit = (node: ts.Node): void => {
    if (
      ts.isPropertyAssignment(node) &&
      ts.isIdentifier(node.name) &&
      /^[A-Z][A-Z0-9_]+$/.test(node.name.text)
    ) {
      const doc = ts
        .getJSDocCommentsAndTags(node)
        .map((tag) => ts.getTextOfJSDocComment(tag.comment) ?? '')
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim();
      if (doc) found.set(node.name.text, doc);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function serviceSchemas(): Map<string, { schema: unknown; file: string }> {
  const services = new Map<string, { schema: unknown; file: string }>();
  for (const name of readdirSync(path.join(REPO, 'services')).sort()) {
    const file = `services/${name}/src/config.ts`;
    let exported: Record<string, unknown>;
    try {
      exported = load(path.join(REPO, file)) as Record<string, unknown>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') continue;
      throw error;
    }
    const key = Object.keys(exported).find((k) => k.endsWith('EnvSchema'));
    if (key) services.set(name, { schema: exported[key], file });
  }
  return services;
}

function variables(): { list: Variable[]; docs: Map<string, Map<string, string>> } {
  const byName = new Map<string, Variable>();
  const shared = new Map<string, string>();
  for (const file of SHARED_SOURCES) for (const [k, v] of docComments(file)) shared.set(k, v);
  const docs = new Map<string, Map<string, string>>();
  for (const [service, { schema, file }] of serviceSchemas()) {
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
      properties: Record<string, JsonSchemaProperty>;
      required?: string[];
    };
    const own = docComments(file);
    for (const [name, property] of Object.entries(json.properties)) {
      const variable = byName.get(name) ?? { name, services: new Map() };
      variable.services.set(service, { schema: property, required: json.required?.includes(name) ?? false });
      byName.set(name, variable);
      const doc = own.get(name) ?? shared.get(name);
      if (doc) docs.set(name, (docs.get(name) ?? new Map<string, string>()).set(service, doc));
    }
  }
  const list = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  return { list, docs };
}

function shownDefault(value: unknown): string {
  // A path default is absolute on the machine that renders; the page names it from the repository.
  if (typeof value === 'string' && path.isAbsolute(value)) return `\`${path.relative(REPO, value)}\``;
  return value === '' ? 'empty' : `\`${String(value)}\``;
}

function defaults(variable: Variable): string {
  const entries = [...variable.services.entries()];
  if (entries.some(([, s]) => s.required)) {
    return entries.every(([, s]) => s.required)
      ? 'required'
      : `required (${names(entries.filter(([, s]) => s.required))})`;
  }
  const shown = entries.map(([service, s]) => [
    service,
    s.schema.default === undefined ? 'unset' : shownDefault(s.schema.default),
  ]);
  const distinct = new Set(shown.map(([, d]) => d));
  if (distinct.size === 1) return shown[0]![1]!;
  return shown.map(([service, d]) => `${d} (${service})`).join(', ');
}

function names(entries: [string, unknown][]): string {
  return entries.map(([service]) => service).join(', ');
}

const SAFE_MAX = Number.MAX_SAFE_INTEGER;

function accepts(variable: Variable): string {
  const schema = [...variable.services.values()][0]!.schema;
  if (schema.enum) return schema.enum.map((v) => `\`${String(v)}\``).join(', ');
  if (schema.type === 'integer' || schema.type === 'number') {
    const min = schema.minimum;
    const max = schema.maximum !== undefined && schema.maximum < SAFE_MAX ? schema.maximum : undefined;
    if (min !== undefined && max !== undefined) return `integer ${min}..${max}`;
    if (min !== undefined) return `integer >= ${min}`;
    return 'integer';
  }
  if (schema.format === 'uri') return 'URL';
  if (schema.minLength !== undefined && schema.minLength > 1)
    return `text, at least ${schema.minLength} characters`;
  return 'text';
}

function description(variable: Variable, docs: Map<string, Map<string, string>>): string {
  const texts = docs.get(variable.name);
  if (!texts) return '';
  const distinct = [...new Set(texts.values())];
  if (distinct.length === 1) return distinct[0]!;
  return [...texts.entries()].map(([service, text]) => `${service}: ${text}`).join(' ');
}

function usedBy(variable: Variable, all: number): string {
  return variable.services.size === all ? 'all' : [...variable.services.keys()].join(', ');
}

/** A markdown table as prettier lays it out (columns padded to their widest cell). */
function table(header: string[], rows: string[][]): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const all = [header, ...rows].map((row) => row.map(cell));
  const widths = header.map((_, i) => Math.max(3, ...all.map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((text, i) => text.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(all[0]!), line(widths.map((w) => '-'.repeat(w))), ...all.slice(1).map(line)].join('\n');
}

export function renderConfigReference(): string {
  const { list, docs } = variables();
  const serviceCount = serviceSchemas().size;
  const rows = list.map((v) => [
    `\`${v.name}\``,
    defaults(v),
    accepts(v),
    usedBy(v, serviceCount),
    description(v, docs),
  ]);
  return `<!-- Generated by scripts/generate-config-reference.ts from the services' config schemas: do not edit; run \`pnpm docs:config\`. -->

# Configuration reference

Every service reads environment variables only, validated at start against its schema
(\`services/<name>/src/config.ts\`, on the shared part in \`packages/config\`); a bad value stops the
service with a message naming the variable (exit 78). Each variable may instead be given as a file
with \`<NAME>_FILE\` (Kubernetes secrets). An empty value counts as unset.

${table(['variable', 'default', 'accepts', 'used by', 'meaning'], rows)}

## Read outside the schemas

- **Tracing**: the OpenTelemetry SDK's standard variables (\`OTEL_EXPORTER_OTLP_ENDPOINT\`,
  \`OTEL_TRACES_EXPORTER\`, \`OTEL_SERVICE_NAME\`, \`OTEL_TRACES_SAMPLER\`, ...), read by
  \`packages/tracing\`, and \`PACK_TRACE_LLM_CONTENT\` (\`true\` records prompts and completions on
  LLM spans, redacted): [operations.md](../operations.md#tracing).
- **Local tools** (\`pnpm start\`, \`pnpm demo\`, \`pnpm packctl\`, \`scripts/infra.sh\`,
  \`scripts/trace-viewer.sh\`): \`PACK_TRACING\`, \`PACK_GATEWAY_URL\`, \`PACK_ADMIN_TOKEN\`,
  \`PACK_STACK_FILE\`, \`PACK_METRICS_URLS\`, \`PACK_DEMO_TIMEOUT_SECONDS\`, \`PACK_TRACE_VIEWER_URL\`,
  \`PACK_TRACE_VIEWER_*\`, \`PACK_INFRA_DIR\`, \`PACK_PG_PORT\`, \`PACK_MONGO_PORT\`, described in each
  script's opening comment.
`;
}

if (require.main === module) {
  writeFileSync(CONFIG_REFERENCE_FILE, renderConfigReference());
  process.stdout.write(`wrote ${path.relative(REPO, CONFIG_REFERENCE_FILE)}\n`);
}
