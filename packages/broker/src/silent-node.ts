import type { ChannelModel } from 'amqplib';
import type { Socket } from 'node:net';

/** amqplib's error when a connection misses its heartbeats. */
const HEARTBEAT_TIMEOUT = 'Heartbeat timeout';

/**
 * amqplib gives a connection up on a missed heartbeat by ending its socket: a half-close, whose
 * FIN a silent node never acknowledges. The socket then stays with the process, holding what was
 * queued for the node, until TCP gives up, minutes later; every connection to a node cut off
 * leaves one. Such a connection is of no further use, so its socket is reset at once. Any other
 * close (ours, the broker's close handshake, a socket error) is left as amqplib makes it.
 *
 * Returns false when the connection does not have the expected shape (another amqplib version):
 * the socket is then left to TCP.
 */
export function resetWhenSilent(model: ChannelModel): boolean {
  const stream = (model as unknown as { connection?: { stream?: Partial<Socket> } }).connection?.stream;
  if (!stream || typeof stream.resetAndDestroy !== 'function') return false;
  // amqplib reports the missed heartbeat just before it ends the socket: reset first, nothing
  // is then left to end.
  model.on('error', (error?: unknown) => {
    if (error instanceof Error && error.message === HEARTBEAT_TIMEOUT && !stream.destroyed)
      stream.resetAndDestroy!();
  });
  return true;
}
