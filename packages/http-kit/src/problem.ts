import { z } from 'zod';
import type { FieldErrors } from './errors';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** RFC 9457 body, with `errors` on validation failures and `error_id` on 500s. */
export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  instance: z.string().optional(),
  errors: z.record(z.string(), z.array(z.string())).optional(),
  error_id: z.string().optional(),
});
export type Problem = z.infer<typeof problemSchema>;

/** A problem+json answer in a route's `responses`, as the OpenAPI document shows it. */
export function problemSpec(description: string) {
  return { description, schema: problemSchema };
}

export function problemType(code: string): string {
  return `urn:pack:problem:${code.replace(/_/g, '-')}`;
}

/**
 * Turns zod issues into `{ "field.path": ["message"] }`, prefixed with where they came from. The
 * map has no prototype: a field named `__proto__` or `constructor` is a key like any other.
 */
export function zodFieldErrors(error: z.ZodError, prefix?: string): FieldErrors {
  const errors: FieldErrors = Object.create(null) as FieldErrors;
  for (const issue of error.issues) {
    const path = [...(prefix ? [prefix] : []), ...issue.path.map(String)];
    const keys =
      issue.code === 'unrecognized_keys' ? issue.keys.map((k) => [...path, k].join('.')) : [path.join('.')];
    for (const key of keys) {
      const message = issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message;
      (errors[key || '(body)'] ??= []).push(message);
    }
  }
  return errors;
}
