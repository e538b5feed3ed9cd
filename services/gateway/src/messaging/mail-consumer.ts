import { on, type ConsumerSpec } from '@pack/broker';
import { events } from '@pack/contracts';
import { stateChangedMail, submittedMail, type Notifier } from '../domain/mail';

/**
 * Change Instance mail: the Service's owner hears of a submission, the consumer of every move of
 * their Change Instance. A failed send is retried with delay, then dead-lettered (at least once:
 * a crash between sending and acknowledging sends the mail again).
 */
export function mailConsumer(notifier: Notifier): ConsumerSpec {
  return {
    name: 'gateway.change-instance-mail',
    handlers: [
      on(events.changeInstanceCreated, async (data) => {
        await notifier.notify(submittedMail(data));
      }),
      on(events.changeInstanceStateChanged, async (data) => {
        await notifier.notify(stateChangedMail(data));
      }),
    ],
  };
}
