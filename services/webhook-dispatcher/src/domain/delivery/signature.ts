import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks headers (standardwebhooks.com): HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>` with the secret's bytes (the part after `whsec_`,
 * base64, read leniently as Node reads base64), sent as `v1,<base64>`. Node's native HMAC, which
 * gives the official `standardwebhooks` package's signature (the tests verify every delivery
 * with it) at a fraction of its pure-JavaScript SHA-256's cost. An empty key (a secret that
 * cannot be decrypted) still signs: HMAC pads a short key with zero bytes, so the empty key and
 * one zero byte, which the package uses, sign alike. The timestamp is the attempt's, so a retry
 * is not refused as stale by a receiver's tolerance window; the id stays the same, so a receiver
 * can de-duplicate.
 */
export function standardWebhookHeaders(
  secret: string,
  messageId: string,
  body: string,
  nowMs = Date.now(),
): Record<string, string> {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const timestamp = String(Math.floor(nowMs / 1000));
  const signature = createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`).digest('base64');
  return {
    'webhook-id': messageId,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  };
}
