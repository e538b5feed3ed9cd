import { clientAddress } from './auth-routes';

describe('client address for the sign-in rate limit', () => {
  it('is the peer when no proxy is trusted, whatever X-Forwarded-For claims', () => {
    expect(clientAddress('10.0.0.5', '203.0.113.9', 0)).toBe('10.0.0.5');
  });

  it('is the entry the last trusted proxy appended, never one the client wrote itself', () => {
    expect(clientAddress('10.0.0.5', '198.51.100.1, 203.0.113.9', 1)).toBe('203.0.113.9');
    expect(clientAddress('10.0.0.5', '198.51.100.1, 203.0.113.9, 10.0.0.4', 2)).toBe('203.0.113.9');
  });

  it('falls back to the leftmost entry when the chain is shorter than the hops', () => {
    expect(clientAddress('10.0.0.5', undefined, 1)).toBe('10.0.0.5');
    expect(clientAddress('10.0.0.5', '203.0.113.9', 3)).toBe('203.0.113.9');
  });
});
