import type { EventData, events, GeneralSettings } from '@pack/contracts';
import { ConflictError } from '@pack/errors';
import type { Logger } from '@pack/logging';
import type { TokenStore } from './store';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends through the SMTP server of the settings (messaging/smtp-mailer.ts). */
export interface Mailer {
  /** Throws an AppError that says what failed (unreachable, refused login, TLS); never a password. */
  send(smtp: GeneralSettings['smtp'], message: MailMessage): Promise<void>;
}

type Created = EventData<typeof events.changeInstanceCreated>;
type StateChanged = EventData<typeof events.changeInstanceStateChanged>;

/** The owner's mail when a consumer submits to their Service. */
export function submittedMail(data: Created): { userId: number; subject: string; text: string } {
  return {
    userId: data.service.owner.id,
    subject: `Change Instance #${data.change_instance_id} submitted to ${data.service.name}`,
    text: [
      `${data.consumer_name} submitted a declaration to your Service ${data.service.name}.`,
      `Change Instance #${data.change_instance_id} is ${data.state}${data.auto_approved ? ' (approved automatically)' : ''}.`,
    ].join('\n'),
  };
}

/** The consumer's mail when their Change Instance moves. */
export function stateChangedMail(data: StateChanged): { userId: number; subject: string; text: string } {
  const by =
    data.changed_by.kind === 'user'
      ? (data.changed_by.username ?? 'a user')
      : data.changed_by.kind.replace('_', ' ');
  return {
    userId: data.consumer_id,
    subject: `Change Instance #${data.change_instance_id} is now ${data.state}`,
    text: [
      `Your Change Instance #${data.change_instance_id} for ${data.service.name} moved from ${data.old_state} to ${data.state} (by ${by}).`,
      ...(data.reasons.length > 0 ? ['', 'Reasons:', ...data.reasons.map((reason) => `- ${reason}`)] : []),
    ].join('\n'),
  };
}

export interface NotifierOptions {
  users: TokenStore;
  mailer: Mailer;
  settings: () => Promise<GeneralSettings>;
  logger: Logger;
}

/** Mail to users about their Change Instances, while SMTP is enabled in the settings. */
export class Notifier {
  constructor(private readonly options: NotifierOptions) {}

  /** Whether mail is on now (the settings of this moment). */
  async enabled(): Promise<boolean> {
    return (await this.options.settings()).smtp.ENABLED;
  }

  /** Sends one notification; a user without an address, or SMTP switched off, means no mail. */
  async notify(mail: { userId: number; subject: string; text: string }): Promise<boolean> {
    const { smtp } = await this.options.settings();
    if (!smtp.ENABLED) return false;
    const user = await this.options.users.findUserById(mail.userId);
    if (!user?.email) {
      this.options.logger.info({ user_id: mail.userId }, 'no mail: the user has no email address');
      return false;
    }
    await this.options.mailer.send(smtp, { to: user.email, subject: mail.subject, text: mail.text });
    this.options.logger.info({ user_id: user._id, subject: mail.subject }, 'mail sent');
    return true;
  }

  /** The admin's test mail: sent with the current SMTP settings, refused while SMTP is off. */
  async test(to: string): Promise<void> {
    const { smtp } = await this.options.settings();
    if (!smtp.ENABLED)
      throw new ConflictError('SMTP is not enabled in the general settings; enable it first.');
    await this.options.mailer.send(smtp, {
      to,
      subject: 'Test mail from the pack platform',
      text: 'This is a test mail: the SMTP settings of the pack platform work.',
    });
  }
}
