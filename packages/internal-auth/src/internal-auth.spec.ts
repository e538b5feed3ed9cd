import { principalHeaders, verifyPrincipal } from './internal-auth';

const secret = 'a-secret-of-at-least-thirty-two-chars';
const alice = { id: 7, username: 'alice', role: 'service_owner' as const };

describe('principal headers', () => {
  it('carry the principal from the gateway to a service', () => {
    const headers = principalHeaders(secret, 'GET', '/v1/catalog/services/', alice, 1000);
    expect(verifyPrincipal(secret, 'GET', '/v1/catalog/services/', headers, 1000)).toEqual(alice);
  });

  it('are refused when forged, replayed elsewhere, stale or signed with another secret', () => {
    const headers = principalHeaders(secret, 'GET', '/v1/catalog/services/', alice, 1000);
    const admin = Buffer.from(JSON.stringify({ ...alice, role: 'admin' })).toString('base64url');
    expect(
      verifyPrincipal(
        secret,
        'GET',
        '/v1/catalog/services/',
        { ...headers, 'x-pack-principal': admin },
        1000,
      ),
    ).toBeNull();
    expect(verifyPrincipal(secret, 'DELETE', '/v1/catalog/services/', headers, 1000)).toBeNull();
    expect(verifyPrincipal(secret, 'GET', '/v1/catalog/services/1/', headers, 1000)).toBeNull();
    expect(verifyPrincipal(secret, 'GET', '/v1/catalog/services/', headers, 1000 + 61_000)).toBeNull();
    expect(verifyPrincipal(`${secret}x`, 'GET', '/v1/catalog/services/', headers, 1000)).toBeNull();
    expect(verifyPrincipal(secret, 'GET', '/v1/catalog/services/', {}, 1000)).toBeNull();
  });
});
