import { TokenCache } from './token-cache';
import { hashToken, tokenFromHeader, generateToken } from './token';

const alice = { id: 1, username: 'alice', role: 'admin' as const };

describe('TokenCache', () => {
  it('remembers principals and unknown tokens until their TTLs end', () => {
    const cache = new TokenCache(10, 1000, 100);
    cache.set('a', alice, 0);
    cache.set('b', null, 0);
    expect(cache.get('a', 999)).toEqual(alice);
    expect(cache.get('b', 50)).toBeNull();
    expect(cache.get('b', 100)).toBeUndefined();
    expect(cache.get('a', 1000)).toBeUndefined();
  });

  it('drops the oldest entry when full and forgets evicted tokens', () => {
    const cache = new TokenCache(2);
    cache.set('a', alice);
    cache.set('b', alice);
    cache.set('c', alice);
    expect(cache.get('a')).toBeUndefined();
    cache.evict('b');
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('c')).toEqual(alice);
  });
});

describe('tokens', () => {
  it('are random, long, and stored only as a SHA-256 hash', () => {
    const token = generateToken();
    expect(token).toMatch(/^pack_[A-Za-z0-9_-]{43}$/);
    expect(generateToken()).not.toBe(token);
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken(token)).not.toContain(token.slice(5, 15));
  });

  it('are read only from "Authorization: Token <token>"', () => {
    expect(tokenFromHeader('Token pack_abcdefghijklmnop')).toBe('pack_abcdefghijklmnop');
    expect(tokenFromHeader('Bearer pack_abcdefghijklmnop')).toBeNull();
    expect(tokenFromHeader('Token short')).toBeNull();
    expect(tokenFromHeader(undefined)).toBeNull();
  });
});
