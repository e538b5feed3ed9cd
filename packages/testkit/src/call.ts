import type { Principal } from '@pack/contracts';
import { principalHeaders } from '@pack/http-kit';
import { TEST_INTERNAL_SECRET } from './helpers';

export interface CallResult {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
  body: any;
  headers: Headers;
}

/**
 * Calls a service directly (no gateway) as `principal`, signing the principal headers the way
 * the gateway does; `null` sends none (an unauthenticated call). The body is sent as JSON.
 */
export async function callAs(
  baseUrl: string,
  principal: Principal | null,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<CallResult> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(principal ? principalHeaders(TEST_INTERNAL_SECRET, method, path, principal) : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed, headers: response.headers };
}
