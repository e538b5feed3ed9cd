import Ajv from 'ajv';
import { z } from 'zod';
import { changeInstanceStateSchema } from './events';
import { JSON_SCHEMA_DRAFT_07 } from './gen-ui';
import { HTTP_URL_PATTERN, isPlainHttpUrl } from './http-url';
import { jsonBytes, storedText, storedTextChecks } from './text';

/** The field types the General Settings groups are declared with (settings.ts), and their checks. */

export const MAX_TEXT = 1000;
export const bool = (description: string) => z.boolean().describe(description);
export const text = (description: string, max = MAX_TEXT) =>
  storedText().max(max, `must be at most ${max} characters`).describe(description);
export const secret = (description: string) =>
  storedText().max(4096, 'must be at most 4096 characters').describe(`${description} (secret)`);
export const optionalHttpUrl = (description: string) =>
  z
    .union(
      [z.literal(''), z.url({ protocol: /^https?$/, error: 'must be an http(s) URL or empty' }).max(2048)],
      {
        error: 'must be an http(s) URL or empty',
      },
    )
    .check(...storedTextChecks())
    .describe(description);
/** Why `value` is not a server's base URL (http(s), no credentials, query or fragment), or null. */
export function serverUrlProblem(value: string, { originOnly = false } = {}): string | null {
  if (!new RegExp(`^${HTTP_URL_PATTERN}$`).test(value) || !isPlainHttpUrl(value))
    return 'must be an http(s) URL without user or password, or empty';
  const url = new URL(value);
  if (value.includes('?') || value.includes('#')) return 'must not carry a query (?) or fragment (#)';
  if (originOnly && url.pathname !== '/')
    return 'must be scheme, host and port only (such as https://pack.example.com), without a path';
  return null;
}

/** A server's base URL (serverUrlProblem), or empty. */
export const optionalServerUrl = (description: string, options: { originOnly?: boolean } = {}) =>
  storedText()
    .max(2048, 'must be at most 2048 characters')
    .superRefine((value, ctx) => {
      const problem = value === '' ? null : serverUrlProblem(value, options);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    // One pattern in the document: the URL rule leaves NUL out, so it states storedText's rule too.
    .meta({ pattern: `^$|^${HTTP_URL_PATTERN}$` })
    .describe(description);
export const perMinute = (description: string) =>
  z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(100_000, 'must be at most 100000')
    .describe(description);

/** One or more LDAP server URIs separated by spaces, as LDAP client libraries accept them. */
export const LDAP_URIS =
  /^ldaps?:\/\/[^\s/?#\u0000]+(\/[^\s\u0000]*)?(\s+ldaps?:\/\/[^\s/?#\u0000]+(\/[^\s\u0000]*)?)*$/;
/** A distinguished name: attribute=value pairs separated by commas (escaped commas allowed). */
export const DN =
  /^[A-Za-z][A-Za-z0-9-]*=(?:[^,\\\u0000]|\\[^\u0000])+(?:,\s*[A-Za-z][A-Za-z0-9-]*=(?:[^,\\\u0000]|\\[^\u0000])+)*$/;
/** A host name or an IPv4 address (RFC 1123 labels), or an IPv6 address. */
export const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$|^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*$/;

/**
 * A string that is empty or matches `pattern`; one clear message instead of a raw regex. The
 * OpenAPI document states the rule as one pattern: `pattern` leaves the NUL character out (as
 * LDAP_URIS, DN and HOST do), so it states storedText's rule too. Two patterns side by side made
 * a client's generator search for text with a NUL that matches the rule, which takes minutes.
 */
export const emptyOr = (pattern: RegExp, max: number, message: string) =>
  storedText()
    .max(max, `must be at most ${max} characters`)
    .refine((value) => value === '' || pattern.test(value), { error: message })
    .meta({ pattern: `^$|${pattern.source}` });
export const dn = (description: string) =>
  emptyOr(DN, MAX_TEXT, 'must be a DN such as ou=people,dc=example,dc=com, or empty').describe(description);
export const stateFilter = (description: string) =>
  z
    .array(changeInstanceStateSchema)
    .refine((states) => new Set(states).size === states.length, 'must not list a state twice')
    .meta({ uniqueItems: true })
    .describe(description);

export const GEN_UI_CATALOG_SCHEMA_MAX_BYTES = 256 * 1024;

/** The problems that make a value not a usable draft-07 JSON Schema (empty when it is one). */
export function jsonSchemaProblems(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    return ['must be a JSON Schema object'];
  const declared = (schema as { $schema?: unknown }).$schema;
  if (
    declared !== undefined &&
    declared !== JSON_SCHEMA_DRAFT_07 &&
    declared !== JSON_SCHEMA_DRAFT_07.slice(0, -1)
  ) {
    return [`$schema must be ${JSON_SCHEMA_DRAFT_07} (draft-07) or absent`];
  }
  // A fresh instance per check: compiled schemas are cached per instance, and a user's `$id`
  // must not collide with an earlier one. Unknown keywords are legal JSON Schema (strict: false).
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  if (!ajv.validateSchema(schema)) {
    return (ajv.errors ?? []).map(
      (error) => `${error.instancePath || '(root)'} ${error.message ?? 'is invalid'}`,
    );
  }
  try {
    ajv.compile(schema); // unresolvable $refs and invalid regular expressions only show here
    return [];
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)];
  }
}

export const catalogSchemaValue = z.record(z.string(), z.unknown()).nullable();
export const catalogSchemaWrite = catalogSchemaValue.superRefine((value, ctx) => {
  if (value === null) return;
  if (jsonBytes(value) > GEN_UI_CATALOG_SCHEMA_MAX_BYTES) {
    ctx.addIssue({
      code: 'custom',
      message: `must be at most ${GEN_UI_CATALOG_SCHEMA_MAX_BYTES} bytes of JSON`,
    });
    return;
  }
  for (const problem of jsonSchemaProblems(value))
    ctx.addIssue({ code: 'custom', message: `is not a valid JSON Schema: ${problem}` });
});
