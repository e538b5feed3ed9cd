import { Webhook } from 'standardwebhooks';

/**
 * HMAC pads a key shorter than its block with zero bytes, so one zero byte signs as the empty key
 * (a secret that cannot be decrypted): the package refuses an empty key, a delivery must not.
 */
const EMPTY_KEY = new Uint8Array(1);

/**
 * Standard Webhooks headers (standardwebhooks.com), signed by the official `standardwebhooks`
 * package: HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>` with the secret's bytes
 * (the part after `whsec_`, base64), sent as `v1,<base64>`. The timestamp is the attempt's, so a
 * retry is not refused as stale by a receiver's tolerance window; the id stays the same, so a
 * receiver can de-duplicate.
 */
export function standardWebhookHeaders(
  secret: string,
  messageId: string,
  body: string,
  nowMs = Date.now(),
): Record<string, string> {
  // Node's base64 reading (lenient, as the secrets were always read) gives the raw key bytes.
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signer = new Webhook(key.length > 0 ? key : EMPTY_KEY, { format: 'raw' });
  const sentAt = new Date(Math.floor(nowMs / 1000) * 1000);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(sentAt.getTime() / 1000),
    'webhook-signature': signer.sign(messageId, sentAt, body),
  };
}
