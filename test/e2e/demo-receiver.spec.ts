/** The demo's webhook receiver checks signatures with the official Standard Webhooks library. */
import { Webhook } from 'standardwebhooks';
import { signatureValid, type Delivery } from '../../scripts/demo/local-servers';

const secret = `whsec_${Buffer.from('the demo webhook secret, 32 bytes').toString('base64')}`;

function delivery(body: string, signedBody = body, signedWith = secret, sentAt = new Date()): Delivery {
  const id = 'msg_demo_1';
  return {
    at: new Date(),
    path: '/hooks/pack-demo',
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': new Webhook(signedWith).sign(id, sentAt, signedBody),
    },
    body,
  };
}

describe("the demo receiver's signature check", () => {
  const body = JSON.stringify({ type: 'pack.stage.completed', data: { id: 1 } });

  it('accepts a delivery signed with the webhook secret', () => {
    expect(signatureValid(delivery(body), secret)).toBe(true);
  });

  it('refuses a body changed after signing', () => {
    expect(signatureValid(delivery(body, body.replace('1', '2')), secret)).toBe(false);
  });

  it('refuses a signature made with another secret', () => {
    const other = `whsec_${Buffer.from('another secret of thirty-two byte').toString('base64')}`;
    expect(signatureValid(delivery(body, body, other), secret)).toBe(false);
  });

  it('refuses a delivery signed long ago (a replayed one)', () => {
    expect(signatureValid(delivery(body, body, secret, new Date(Date.now() - 3_600_000)), secret)).toBe(
      false,
    );
  });
});
