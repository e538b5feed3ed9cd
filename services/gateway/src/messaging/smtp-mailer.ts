import nodemailer from 'nodemailer';
import type { GeneralSettings } from '@pack/contracts';
import { AppError, BadGatewayError } from '@pack/errors';
import type { Mailer, MailMessage } from '../domain/mail';
import { errorField } from '../domain/error-fields';

type SmtpSettings = GeneralSettings['smtp'];

export interface SmtpMailerOptions {
  /** MAIL_FROM: the sender address. */
  from: string;
  timeoutMs: number;
}

const TLS_FAILURE = /certificate|CERT_|TLS|SSL|wrong version/i;

/** The failure in words an operator can act on; nodemailer's own text only where it holds no secret. */
function mailError(smtp: SmtpSettings, error: unknown): AppError {
  const server = `${smtp.EMAIL_HOST}:${smtp.EMAIL_PORT}`;
  const code = errorField(error, 'code');
  const message = error instanceof Error ? error.message : String(error);
  const responseCode = errorField(error, 'responseCode');
  if (code === 'EAUTH')
    return new BadGatewayError(
      `The SMTP server ${server} refused the login${responseCode ? ` (${responseCode})` : ''}; check EMAIL_HOST_USER and EMAIL_HOST_PASSWORD.`,
      { cause: error },
    );
  if (code === 'ETLS' || TLS_FAILURE.test(message))
    return new BadGatewayError(`TLS with the SMTP server ${server} failed: ${message}.`, { cause: error });
  if (code === 'ECONNECTION' || code === 'EDNS' || /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH/.test(message))
    return new BadGatewayError(`The SMTP server ${server} is unreachable; check EMAIL_HOST and EMAIL_PORT.`, {
      cause: error,
    });
  if (code === 'ETIMEDOUT')
    return new BadGatewayError(`The SMTP server ${server} did not answer in time.`, { cause: error });
  if (code === 'EENVELOPE')
    return new BadGatewayError(
      `The SMTP server ${server} refused the recipient${responseCode ? ` (${responseCode})` : ''}.`,
      {
        cause: error,
      },
    );
  return new BadGatewayError(`Sending mail through ${server} failed (${code || 'error'}).`, { cause: error });
}

/**
 * Mail through the SMTP server the settings name at the moment of sending: EMAIL_USE_TLS means
 * STARTTLS is required (port 465 speaks TLS from the start); without it nothing is encrypted.
 * A transport per message: settings may change between two, and mail is rare.
 */
export class SmtpMailer implements Mailer {
  constructor(private readonly options: SmtpMailerOptions) {}

  async send(smtp: SmtpSettings, message: MailMessage): Promise<void> {
    if (!smtp.EMAIL_HOST)
      throw new BadGatewayError('SMTP is enabled but EMAIL_HOST is empty in the general settings.');
    const implicitTls = smtp.EMAIL_PORT === 465;
    const transport = nodemailer.createTransport({
      host: smtp.EMAIL_HOST,
      port: smtp.EMAIL_PORT,
      secure: implicitTls,
      requireTLS: smtp.EMAIL_USE_TLS && !implicitTls,
      ignoreTLS: !smtp.EMAIL_USE_TLS && !implicitTls,
      auth: smtp.EMAIL_HOST_USER ? { user: smtp.EMAIL_HOST_USER, pass: smtp.EMAIL_HOST_PASSWORD } : undefined,
      connectionTimeout: this.options.timeoutMs,
      greetingTimeout: this.options.timeoutMs,
      socketTimeout: this.options.timeoutMs,
      logger: false,
    });
    try {
      await transport.sendMail({ from: this.options.from, ...message });
    } catch (error) {
      throw mailError(smtp, error);
    } finally {
      transport.close();
    }
  }
}
