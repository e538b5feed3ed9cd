import { idParams, idSchema, problemSpec } from '@pack/http-kit';

export { idParams };
export const optionalId = idSchema.optional();

const problem = problemSpec;

export const problems = {
  400: problem('Invalid request'),
  401: problem('No or unknown token'),
  403: problem('The caller role may not do this'),
  404: problem('No such resource in the caller scope'),
  409: problem('Conflict with the current state'),
} as const;

export function pick<K extends keyof typeof problems>(...codes: K[]): Pick<typeof problems, K> {
  return Object.fromEntries(codes.map((code) => [code, problems[code]])) as Pick<typeof problems, K>;
}
