import { standardWebhookHeaders } from './signature';

// Expected signatures computed apart from this code, with
// `printf '%s' '<id>.<timestamp>.<body>' | openssl dgst -sha256 -hmac '<key>' -binary | base64`.
describe('standardWebhookHeaders', () => {
  it('signs `<webhook-id>.<webhook-timestamp>.<body>` with the bytes after whsec_, as v1,<base64>', () => {
    const secret = `whsec_${Buffer.from('twenty-four bytes secret').toString('base64')}`;
    const body = '{"event":"created","text":"héllo ✓"}';
    expect(standardWebhookHeaders(secret, '00000042-0007', body, 1_764_150_000_999)).toEqual({
      'webhook-id': '00000042-0007',
      'webhook-timestamp': '1764150000',
      'webhook-signature': 'v1,cgEVZv3qX/8OGpt6o4q0bFl7DfGgj3npQOIE41xmJHY=',
    });
  });

  it('still signs (with an empty key) when the secret cannot be read, rather than failing the delivery', () => {
    expect(standardWebhookHeaders('', '00000042-0007', '{"a":1}', 1_764_150_000_000)).toEqual({
      'webhook-id': '00000042-0007',
      'webhook-timestamp': '1764150000',
      'webhook-signature': 'v1,seATukEyuEJKPeMjzsx8L6BtHh8ysDLluMDxW49FFNk=',
    });
  });
});
