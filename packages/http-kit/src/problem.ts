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

/**
 * The problem answers route files declare, in the words most routes use: one table for every
 * service. A route file words an answer its own way where it says more (which resource a 404
 * is about, who a 403 lets in) through `problemTable`.
 */
export const PROBLEM_TABLE = {
  400: 'Invalid request; `errors` names each field',
  401: 'No or unknown token',
  403: 'The caller role may not do this',
  404: 'No such resource in the caller scope',
  409: 'Conflict with the current state',
} as const satisfies Record<number, string>;

/** Problem answers for a route's `responses`, by status. */
export type ProblemResponses = Record<number, { description: string; schema: typeof problemSchema }>;

/**
 * A route file's problem table: PROBLEM_TABLE with the file's own wording on top. The function it
 * returns gives the answers of the statuses asked for, for a route's `responses`:
 *
 *     const problems = problemTable({ 404: 'No such LLM model' });
 *     responses: { 200: ..., ...problems(400, 401, 403, 404) }
 *
 * A status neither table words is a programming error (thrown when the routes are declared).
 */
export function problemTable(own: Record<number, string> = {}): (...statuses: number[]) => ProblemResponses {
  const words: Record<number, string> = { ...PROBLEM_TABLE, ...own };
  return (...statuses) =>
    Object.fromEntries(
      statuses.map((status) => {
        const description = words[status];
        if (description === undefined) throw new Error(`no problem description for status ${status}`);
        return [status, problemSpec(description)];
      }),
    );
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
  const add = (issues: readonly z.core.$ZodIssue[], base: PropertyKey[]) => {
    for (const issue of issues) {
      const path = [...base, ...issue.path];
      const branch = issue.code === 'invalid_union' ? closestBranch(issue.errors) : undefined;
      if (branch) {
        add(branch, path);
        continue;
      }
      const at = path.map(String);
      const keys =
        issue.code === 'unrecognized_keys' ? issue.keys.map((k) => [...at, k].join('.')) : [at.join('.')];
      for (const key of keys) {
        const message = issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message;
        (errors[key || '(body)'] ??= []).push(message);
      }
    }
  };
  add(error.issues, prefix ? [prefix] : []);
  return errors;
}

/**
 * The issues of the union branch a value came closest to, when that says more than "Invalid
 * input": a branch of the value's own type that failed inside it (an object of a known shape
 * with one bad or unknown key), fewest issues first, then fewest unknown keys. Undefined for a
 * value of none of the branches' types (those issues sit at the union's own path) or no branches.
 */
function closestBranch(
  branches: readonly (readonly z.core.$ZodIssue[])[],
): readonly z.core.$ZodIssue[] | undefined {
  const inside = branches.filter(
    (issues) =>
      issues.length > 0 &&
      issues.every((issue) => issue.path.length > 0 || issue.code === 'unrecognized_keys'),
  );
  const unknown = (issues: readonly z.core.$ZodIssue[]) =>
    issues.filter((issue) => issue.code === 'unrecognized_keys').length;
  return [...inside].sort((a, b) => a.length - b.length || unknown(a) - unknown(b))[0];
}
