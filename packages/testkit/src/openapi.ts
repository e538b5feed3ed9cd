/**
 * Checks a document against the OpenAPI specification's own schema for its version (3.1 here),
 * with @seriousme/openapi-schema-validator. That package is ESM only and finds its schemas
 * through import.meta, which jest's module loader cannot run, so it is loaded by Node's own
 * require (Node >= 20.19 loads ES modules with it).
 */
export async function openApiProblems(document: unknown): Promise<{ version: string; errors: unknown[] }> {
  const nodeRequire = process.getBuiltinModule('node:module').createRequire(__filename);
  const { Validator } = nodeRequire('@seriousme/openapi-schema-validator') as {
    Validator: new () => {
      version: string;
      validate(spec: unknown): Promise<{ valid: boolean; errors?: unknown }>;
    };
  };
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document));
  const errors = result.valid ? [] : Array.isArray(result.errors) ? result.errors : [result.errors];
  return { version: validator.version, errors };
}
