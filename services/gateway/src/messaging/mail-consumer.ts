import { on, type ConsumerSpec } from '@pack/broker';
import { events, type Envelope, type OncePerEvent } from '@pack/contracts';
import { stateChangedMail, submittedMail, type Notifier } from '../domain/mail';

const CONSUMER = 'gateway.change-instance-mail';

/**
 * Change Instance mail: the Service's owner hears of a submission, the consumer of every move of
 * their Change Instance. An event seen twice is mailed once (a marker per event, written after
 * the send: a crash between the two sends it again). While SMTP is off an event is dropped
 * without a marker, so nothing is written. A failed send is retried with delay, then dead-lettered.
 */
export function mailConsumer(notifier: Notifier, once: OncePerEvent): ConsumerSpec {
  const whileEnabled =
    <T>(send: (data: T) => Promise<unknown>) =>
    async (data: T, envelope: Envelope<T>) => {
      if (!(await notifier.enabled())) return;
      await once<T>(CONSUMER, async (payload) => {
        await send(payload);
      })(data, envelope);
    };
  return {
    name: CONSUMER,
    handlers: [
      on(
        events.changeInstanceCreated,
        whileEnabled((data) => notifier.notify(submittedMail(data))),
      ),
      on(
        events.changeInstanceStateChanged,
        whileEnabled((data) => notifier.notify(stateChangedMail(data))),
      ),
    ],
  };
}
