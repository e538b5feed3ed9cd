import type { Dispatcher } from 'undici';
import type { Principal } from '@pack/contracts';
import { principalHeaders } from '@pack/http-kit';
import { TEST_INTERNAL_SECRET } from './env';

export interface CallResult {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
  body: any;
  headers: Headers;
  /** The body as it came, for checks on the exact text (secrets, encodings). */
  text: string;
}

export interface CallOptions {
  /** Calls a service directly, signing this principal the way the gateway does. */
  principal?: Principal | null;
  /** Calls through the gateway with `Authorization: Token <token>`. */
  token?: string | null;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as it is (malformed JSON, other encodings), as application/json unless headers say otherwise. */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
  /** The connections to use (an undici Agent the test closes itself); the process's shared ones by default. */
  dispatcher?: Dispatcher;
}

/**
 * The one way tests call HTTP: a service directly (`principal`: signed principal headers, `null`
 * or absent: none) or the gateway (`token`). The answer's body is parsed when it is JSON.
 */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<CallResult> {
  const { principal, token, body, raw, headers = {}, dispatcher } = options;
  const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body));
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(principal ? principalHeaders(TEST_INTERNAL_SECRET, method, path, principal) : {}),
      ...(token ? { authorization: `Token ${token}` } : {}),
      ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: payload,
    // Node's fetch is undici's: it takes the package's dispatchers, typed apart from its own.
    dispatcher: dispatcher as RequestInit['dispatcher'],
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed, headers: response.headers, text };
}
