import { request, type Dispatcher } from 'undici';
import { RESPONSE_BODY_LIMIT } from '@pack/contracts';
import { TargetRefusedError } from '@pack/net-guard';
import { parseRetryAfter, truncate } from '../domain/delivery/delivery-rules';
import type { Sender, SendResult } from '../domain/delivery/sender';

/**
 * POSTs through the net-guard dispatcher: every connection resolves the host, checks each
 * address and connects to a checked one; redirects are never followed (undici's `request` does
 * not follow them). The body is read up to the kept size and the rest discarded.
 */
export class TargetSender implements Sender {
  constructor(private readonly dispatcher: Dispatcher) {}

  async send(
    url: string,
    headers: Record<string, string>,
    body: string,
    timeoutMs: number,
  ): Promise<SendResult> {
    try {
      const response = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const { text, truncated } = await readLimited(response.body, RESPONSE_BODY_LIMIT);
      const retryAfter = response.headers['retry-after'];
      return {
        status: response.statusCode,
        body: text,
        truncated,
        retryAfter: parseRetryAfter(typeof retryAfter === 'string' ? retryAfter : undefined),
        error: null,
        refused: false,
      };
    } catch (error) {
      const refused =
        error instanceof TargetRefusedError ||
        (error as { cause?: unknown }).cause instanceof TargetRefusedError;
      return {
        status: null,
        body: '',
        truncated: false,
        retryAfter: null,
        error: describe(error),
        refused,
      };
    }
  }
}

async function readLimited(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  limit: number,
): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  // Characters are at most 4 bytes: this many bytes always hold `limit` characters.
  const maxBytes = limit * 4;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > maxBytes) {
      truncated = true;
      body.destroy();
      break;
    }
  }
  const kept = truncate(Buffer.concat(chunks).toString('utf8'), limit);
  return { text: kept.text, truncated: truncated || kept.truncated };
}

/** An error message fit for a response record: what failed, never the URL or a header. */
function describe(error: unknown): string {
  if (error instanceof TargetRefusedError) return error.message;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof TargetRefusedError) return cause.message;
  const code = (error as { code?: string }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timed out';
  if (code) return `network error ${code}`;
  return 'network error';
}
