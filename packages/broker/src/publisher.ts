import { setTimeout as sleep } from 'node:timers/promises';
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import type { Logger } from '@pack/logging';
import { backoffMs } from '@pack/reliability';
import { BrokerUnavailableError, confirmed, PublishNackedError, withinMs } from './confirm';
import { openPublishChannel } from './failover';
import type { topologyNames } from './topology';

export interface PublisherOptions {
  /** How long one publish waits for its confirm. */
  timeoutMs: number;
  /** How long a nacked publish is tried again, on a fresh channel each time, before it fails. */
  nackRetryMs: number;
}

/** Writes one message on `channel`; `done` receives the broker's confirm (or its refusal). */
export type Send = (channel: ConfirmChannel, done: (error: unknown) => void) => void;

/**
 * The confirm channel a connection publishes on, and what a nack does to it (decision 0049).
 *
 * RabbitMQ 3.10's channel sets up its publishing session with a quorum queue on the first publish
 * to it, by asking the node of the queue's recorded leader. When that node has just died (the new
 * leader is not recorded yet, about half a second), the broker nacks the publish and keeps that
 * channel's session unset, so it nacks every later publish to that queue on that channel, for
 * the channel's whole life; a fresh channel publishes fine a moment later (measured on the local
 * cluster). So a nack is answered with a new channel, a short backoff and the same publish again,
 * for up to `nackRetryMs`. The nacked channel is closed once its other confirms are in.
 */
export class Publisher {
  private channel: ConfirmChannel;
  private replacing?: Promise<void>;
  private retired = false;

  private constructor(
    first: ConfirmChannel,
    private readonly open: () => Promise<ConfirmChannel>,
    private readonly log: Logger,
    private readonly options: PublisherOptions,
  ) {
    this.channel = first;
  }

  /**
   * Opens the first channel (with the exchanges declared). `onLost` runs when the broker closes
   * the channel in use (the connection then starts over), not when this publisher replaces one.
   */
  static async open(
    connection: ChannelModel,
    names: ReturnType<typeof topologyNames>,
    log: Logger,
    onLost: () => void,
    options: PublisherOptions,
  ): Promise<Publisher> {
    const created: { publisher?: Publisher } = {};
    const open = () =>
      openPublishChannel(connection, names, log, (channel) => {
        const publisher = created.publisher;
        if (!publisher || (publisher.channel === channel && !publisher.retired)) onLost();
      });
    created.publisher = new Publisher(await open(), open, log, options);
    return created.publisher;
  }

  /** Publishes with `send` and resolves once confirmed; a nack is tried again on a fresh channel. */
  async send(send: Send): Promise<void> {
    const started = Date.now();
    for (let retry = 0; ; retry++) {
      const channel = this.channel;
      try {
        await confirmed(this.options.timeoutMs, (done) => send(channel, done));
        return;
      } catch (error) {
        if (!(error instanceof PublishNackedError) || this.retired) throw error;
        const delay = backoffMs({ baseDelayMs: 100, maxDelayMs: 1000 }, retry, { jitter: 'equal' });
        if (Date.now() - started + delay > this.options.nackRetryMs) throw error;
        await this.replace(channel);
        await sleep(delay);
        if (this.retired) throw error;
      }
    }
  }

  /** The connection is gone or closing: no more retries, and the channel is not ours to close. */
  retire(): void {
    this.retired = true;
  }

  /** Replaces `nacked` with a fresh channel, once however many publishes it nacked. */
  private replace(nacked: ConfirmChannel): Promise<void> {
    if (this.channel !== nacked) return this.replacing ?? Promise.resolve();
    this.replacing ??= this.openFresh(nacked).finally(() => (this.replacing = undefined));
    return this.replacing;
  }

  private async openFresh(nacked: ConfirmChannel): Promise<void> {
    let fresh: ConfirmChannel;
    try {
      fresh = await this.open();
    } catch (error) {
      throw new BrokerUnavailableError(
        `no fresh publish channel: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (this.retired) {
      await withinMs(fresh.close(), 2000);
      return;
    }
    this.channel = fresh;
    this.log.warn('the broker nacked a publish; publishing on a fresh channel');
    // Confirms of other publishes may still be on their way: let them arrive, then close it.
    void withinMs(nacked.waitForConfirms(), this.options.timeoutMs).then(() =>
      withinMs(nacked.close(), 2000),
    );
  }
}
