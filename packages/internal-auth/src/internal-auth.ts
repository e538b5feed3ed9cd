import { createHmac, timingSafeEqual } from 'node:crypto';
import { principalSchema, type Principal } from '@pack/contracts';

/**
 * The gateway passes the authenticated principal to services in these headers, signed with a
 * secret shared inside the cluster. The signature covers the method, the path and a timestamp,
 * so a captured header set cannot be replayed to another route or much later.
 */
export const PRINCIPAL_HEADER = 'x-pack-principal';
export const TIMESTAMP_HEADER = 'x-pack-timestamp';
export const SIGNATURE_HEADER = 'x-pack-signature';
const MAX_SKEW_MS = 60_000;

function sign(secret: string, timestamp: string, method: string, url: string, principal: string): string {
  return createHmac('sha256', secret)
    .update(`${timestamp}\n${method.toUpperCase()}\n${url}\n${principal}`)
    .digest('base64url');
}

export function principalHeaders(
  secret: string,
  method: string,
  url: string,
  principal: Principal,
  now = Date.now(),
) {
  const encoded = Buffer.from(JSON.stringify(principal)).toString('base64url');
  const timestamp = String(now);
  return {
    [PRINCIPAL_HEADER]: encoded,
    [TIMESTAMP_HEADER]: timestamp,
    [SIGNATURE_HEADER]: sign(secret, timestamp, method, url, encoded),
  };
}

type HeaderValue = string | string[] | undefined;

/** The verified principal, or null when the headers are absent, forged, stale or malformed. */
export function verifyPrincipal(
  secret: string,
  method: string,
  url: string,
  headers: Record<string, HeaderValue>,
  now = Date.now(),
): Principal | null {
  const encoded = headers[PRINCIPAL_HEADER];
  const timestamp = headers[TIMESTAMP_HEADER];
  const signature = headers[SIGNATURE_HEADER];
  if (typeof encoded !== 'string' || typeof timestamp !== 'string' || typeof signature !== 'string')
    return null;
  if (!/^\d{1,16}$/.test(timestamp) || Math.abs(now - Number(timestamp)) > MAX_SKEW_MS) return null;
  const expected = Buffer.from(sign(secret, timestamp, method, url, encoded));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  try {
    const parsed = principalSchema.safeParse(JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
