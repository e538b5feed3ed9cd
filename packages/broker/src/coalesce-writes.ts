import type { ChannelModel } from 'amqplib';
import type { Writable } from 'node:stream';

/** The part of amqplib's connection internals this file relies on (amqplib 0.10). */
interface Muxer {
  out?: Writable;
  _readIncoming?: () => void;
}

/**
 * amqplib queues every channel's frames (publishes, acks) and its muxer writes them to the
 * socket once per event-loop turn, but each as a write of its own: a system call each, and on
 * this loopback-heavy deployment a write's system call is the largest single part of a
 * service's CPU per message. Corked for that one pass, the frames of a turn (the acks and
 * publishes of every message handled in it) go as one `writev`. Nothing waits longer: the pass
 * already runs when amqplib would write, and it uncorks before it returns.
 *
 * Returns false when the connection does not have the expected shape (another amqplib version):
 * frames are then written as amqplib writes them.
 */
export function coalesceWrites(model: ChannelModel): boolean {
  const muxer = (model as unknown as { connection?: { muxer?: Muxer } }).connection?.muxer;
  const out = muxer?.out;
  const readIncoming = muxer?._readIncoming;
  if (!muxer || !out || typeof readIncoming !== 'function' || typeof out.cork !== 'function') return false;
  muxer._readIncoming = function corked(this: Muxer) {
    out.cork();
    try {
      readIncoming.call(this);
    } finally {
      out.uncork();
    }
  };
  return true;
}
