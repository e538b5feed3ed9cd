/** How a fire reaches its target (HTTP, not storage); data/target-sender.ts implements Sender. */

/** The answer of the target, or a network-level failure (status null). */
export interface SendResult {
  status: number | null;
  body: string;
  truncated: boolean;
  retryAfter: number | null;
  error: string | null;
  /** The address checks refused the target: retrying will not help. */
  refused: boolean;
}

export interface Sender {
  send(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<SendResult>;
}
