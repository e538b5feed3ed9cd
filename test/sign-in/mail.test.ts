import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { events } from '@pack/contracts';
import { publishEvent, seededSecret, waitFor } from '@pack/testkit';
import { startSignInStack, type SignInStack } from './harness';
import { freePort } from './slapd';

/**
 * Mail through SMTP as the general settings describe it, against a local SMTP server that
 * records what it accepts: the admin's test mail, Change Instance notifications, and clear
 * errors for each misconfiguration.
 */
const SMTP_USER = 'mailer';
const SMTP_PASSWORD = seededSecret('the EMAIL_HOST_PASSWORD', { prefix: 'smtp-password-for-tests-' });
const TEST_MAIL = '/v1/core/general_settings/test_mail/';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

async function startSmtpServer() {
  const received: Received[] = [];
  const server = new SMTPServer({
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) callback(null, { user: SMTP_USER });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((recipient) => recipient.address),
          raw,
        });
        callback();
      });
    },
    logger: false,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Change Instance events the gateway's mail consumer has acknowledged (handled or dropped). */
async function handledMailEvents(metricsUrl: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const line =
    /^broker_consumed_total\{[^}]*queue="[^"]*gateway\.change-instance-mail"[^}]*outcome="ack"[^}]*\} (\d+)$/m;
  return Number(line.exec(text)?.[1] ?? 0);
}

describe('mail through SMTP', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let stack: SignInStack;

  const smtpSettings = (overrides: Record<string, unknown> = {}) => ({
    smtp: {
      ENABLED: true,
      EMAIL_HOST: '127.0.0.1',
      EMAIL_PORT: smtp.port,
      EMAIL_HOST_USER: SMTP_USER,
      EMAIL_HOST_PASSWORD: SMTP_PASSWORD,
      EMAIL_USE_TLS: false,
      ...overrides,
    },
  });
  const testMail = (to: string) => stack.call('POST', TEST_MAIL, { body: { to } });
  const mailTo = (address: string) => smtp.received.filter((mail) => mail.to.includes(address));

  beforeAll(async () => {
    smtp = await startSmtpServer();
    stack = await startSignInStack({ MAIL_FROM: 'pack@example.com' });
  });
  afterAll(async () => {
    await stack?.stop();
    await smtp?.close();
  });

  it('refuses the test mail with 409 while SMTP is not enabled', async () => {
    const answer = await testMail('ops@example.com');
    expect(answer.status).toBe(409);
    expect(answer.body.detail).toBe('SMTP is not enabled in the general settings; enable it first.');
    expect(smtp.received).toEqual([]);
  });

  it('sends the test mail through the configured server, logging in with the configured user', async () => {
    await stack.patchSettings(smtpSettings());
    const answer = await testMail('ops@example.com');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ sent: true, to: 'ops@example.com' });
    const [mail] = mailTo('ops@example.com');
    expect(mail?.from).toBe('pack@example.com');
    expect(mail?.raw).toContain('Subject: Test mail from the pack platform');
  });

  it('says what is wrong: refused login, unreachable server, TLS failure; each change applies to the next mail', async () => {
    await stack.patchSettings(
      smtpSettings({
        EMAIL_HOST_PASSWORD: seededSecret('a wrong EMAIL_HOST_PASSWORD', {
          prefix: 'a-wrong-smtp-password-',
        }),
      }),
    );
    const refused = await testMail('ops@example.com');
    expect(refused.status).toBe(502);
    expect(refused.body.detail).toBe(
      `The SMTP server 127.0.0.1:${smtp.port} refused the login (535); check EMAIL_HOST_USER and EMAIL_HOST_PASSWORD.`,
    );

    const closed = await freePort();
    await stack.patchSettings(smtpSettings({ EMAIL_PORT: closed }));
    const unreachable = await testMail('ops@example.com');
    expect(unreachable.status).toBe(502);
    expect(unreachable.body.detail).toBe(
      `The SMTP server 127.0.0.1:${closed} is unreachable; check EMAIL_HOST and EMAIL_PORT.`,
    );

    // The recording server's STARTTLS certificate is self-signed: nothing is sent over it.
    await stack.patchSettings(smtpSettings({ EMAIL_USE_TLS: true }));
    const tls = await testMail('ops@example.com');
    expect(tls.status).toBe(502);
    expect(tls.body.detail).toMatch(
      new RegExp(`^TLS with the SMTP server 127.0.0.1:${smtp.port} failed: .*certificate`),
    );
    expect(mailTo('ops@example.com')).toHaveLength(1);
  });

  it('mails the owner when a Change Instance is submitted and the consumer when it changes state', async () => {
    await stack.patchSettings(smtpSettings());
    const owner = await stack.call('POST', '/v1/core/tokens/', {
      body: { username: 'owner_mail', role: 'service_owner' },
    });
    const consumer = await stack.call('POST', '/v1/core/tokens/', {
      body: { username: 'consumer_mail', role: 'consumer' },
    });
    for (const [user, email] of [
      [owner.body.user, 'owner@example.com'],
      [consumer.body.user, 'consumer@example.com'],
    ] as const) {
      const set = await stack.call('PATCH', `/v1/core/users/${user.id}/`, { body: { email } });
      expect(set.body).toMatchObject({ email, origin: 'local' });
    }
    const fields = {
      change_instance_id: 41,
      service_item_id: 7,
      declaration_id: 9,
      declaration_json: '{"size":"S"}',
      consumer_id: consumer.body.user.id as number,
      consumer_name: 'consumer_mail',
      service: { id: 3, name: 'Databases', owner: { id: owner.body.user.id as number, name: 'owner_mail' } },
    };
    const amqpUrl = stack.gateway.context.config.AMQP_URL;
    await publishEvent(amqpUrl, stack.namespace, events.changeInstanceCreated, {
      ...fields,
      state: 'PENDING',
      auto_approved: false,
    });
    const submitted = await waitFor(() => mailTo('owner@example.com')[0], { what: "the owner's mail" });
    expect(submitted.raw).toContain('Subject: Change Instance #41 submitted to Databases');

    await publishEvent(amqpUrl, stack.namespace, events.changeInstanceStateChanged, {
      ...fields,
      state: 'REJECTED',
      old_state: 'PENDING',
      reasons: ['size S is sold out'],
      changed_by: { kind: 'user', user_id: owner.body.user.id as number, username: 'owner_mail' },
    });
    const moved = await waitFor(() => mailTo('consumer@example.com')[0], { what: "the consumer's mail" });
    expect(moved.raw).toContain('Subject: Change Instance #41 is now REJECTED');
    expect(moved.raw).toContain('size S is sold out');
  });

  it('sends no mail once SMTP is switched off, without a restart', async () => {
    const mailsBefore = smtp.received.length;
    const owner = await stack.call('POST', '/v1/core/tokens/', {
      body: { username: 'owner_quiet', role: 'service_owner' },
    });
    await stack.call('PATCH', `/v1/core/users/${owner.body.user.id}/`, {
      body: { email: 'quiet@example.com' },
    });
    await stack.patchSettings(smtpSettings({ ENABLED: false }));
    const handled = () => handledMailEvents(stack.gateway.metricsUrl);
    const before = await handled();
    await publishEvent(stack.gateway.context.config.AMQP_URL, stack.namespace, events.changeInstanceCreated, {
      change_instance_id: 77,
      service_item_id: 8,
      declaration_id: 10,
      declaration_json: '{}',
      consumer_id: 999,
      consumer_name: 'someone',
      service: { id: 4, name: 'Queues', owner: { id: owner.body.user.id as number, name: 'owner_quiet' } },
      state: 'PENDING',
      auto_approved: false,
    });
    await waitFor(async () => (await handled()) > before || undefined, { what: 'the event handled' });
    expect(smtp.received.length).toBe(mailsBefore);
    expect(mailTo('quiet@example.com')).toEqual([]);
  });

  it('never writes an SMTP password to the log', () => {
    expect(stack.log.text).toContain('mail sent');
    expect(stack.log.text).not.toContain(SMTP_PASSWORD);
    expect(stack.log.text).not.toContain('a-wrong-smtp-password-11');
  });
});
