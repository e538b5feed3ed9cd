/**
 * The typed client of the public API (openapi-fetch over the generated `paths`). Every call
 * carries the session's token; a failure becomes an ApiError in words; a refused token ends the
 * session so the person signs in again.
 */
import createClient from 'openapi-fetch';
import { session } from '../session';
import { exactFetch } from './exact-json';
import { ApiError } from './problem';
import type { paths } from './schema';

export const api = createClient<paths>({ baseUrl: window.location.origin, fetch: exactFetch });

api.use({
  onRequest({ request }) {
    const token = session.token();
    if (token) request.headers.set('authorization', `Token ${token}`);
    return request;
  },
});

interface Outcome<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The body and headers of a successful call, or an ApiError (status 0 when nothing answered). */
export async function okWithHeaders<T>(call: Promise<Outcome<T>>): Promise<{ data: T; headers: Headers }> {
  let outcome: Outcome<T>;
  try {
    outcome = await call;
  } catch (error) {
    throw new ApiError(0, { detail: error instanceof Error ? error.message : String(error) });
  }
  const { data, error, response } = outcome;
  if (response.ok) return { data: data as T, headers: response.headers };
  const failure = new ApiError(response.status, error, response.headers.get('retry-after'));
  if (response.status === 401 && session.token())
    session.end('Your session ended: the token was refused or has expired.');
  throw failure;
}

/** The body of a successful call, or an ApiError. */
export async function ok<T>(call: Promise<Outcome<T>>): Promise<T> {
  return (await okWithHeaders(call)).data;
}

/** The result list of a paged answer, with its count. */
export interface Page<T> {
  count: number;
  results: T[];
}

export const PAGE_SIZE = 20;
