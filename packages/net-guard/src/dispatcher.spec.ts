import type { LookupAddress, LookupOptions } from 'node:dns';
import { parseAllowedCidrs } from './address';
import { guardedLookup, type Resolver } from './dispatcher';
import { TargetRefusedError } from './errors';

/**
 * The lookup layer alone: what it hands to net.connect is all a socket could ever reach, so
 * public answers are asserted here and no socket is opened toward them.
 */
function answers(...addresses: string[]): Resolver {
  return async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
}

function lookup(resolve: Resolver, options: LookupOptions, allowed = '') {
  return new Promise<{
    error: NodeJS.ErrnoException | null;
    address: string | LookupAddress[];
    family?: number;
  }>((done) => {
    guardedLookup({ allowed: parseAllowedCidrs(allowed) }, resolve)(
      'api.example.test',
      options,
      (error, address, family) => done({ error, address, family }),
    );
  });
}

describe('guardedLookup', () => {
  it('hands back a public answer unchanged (one address or all)', async () => {
    expect(await lookup(answers('8.8.8.8'), {})).toEqual({ error: null, address: '8.8.8.8', family: 4 });
    const all = await lookup(answers('2606:4700:4700::1111', '1.1.1.1'), { all: true });
    expect(all.error).toBeNull();
    expect(all.address).toEqual([
      { address: '2606:4700:4700::1111', family: 6 },
      { address: '1.1.1.1', family: 4 },
    ]);
    expect(await lookup(answers('2606:4700:4700::1111', '1.1.1.1'), { family: 4 })).toEqual({
      error: null,
      address: '1.1.1.1',
      family: 4,
    });
  });

  it('refuses the name when any answer is refused, whatever its position', async () => {
    for (const resolve of [answers('8.8.8.8', '10.0.0.1'), answers('10.0.0.1', '8.8.8.8')]) {
      const { error, address } = await lookup(resolve, { all: true });
      expect(error).toBeInstanceOf(TargetRefusedError);
      expect((error as TargetRefusedError).host).toBe('api.example.test');
      expect((error as TargetRefusedError).reason).toBe('10.0.0.1 is a private address');
      expect(address).toEqual('');
    }
  });

  it('checks the addresses of the other family too', async () => {
    const { error } = await lookup(answers('8.8.8.8', '::1'), { family: 4 });
    expect((error as TargetRefusedError).reason).toBe('::1 is a loopback address');
  });

  it('refuses a name without addresses and passes resolver errors through', async () => {
    expect((await lookup(answers(), {})).error).toBeInstanceOf(TargetRefusedError);
    const failure = Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    const { error } = await lookup(() => Promise.reject(failure), {});
    expect(error).toBe(failure);
  });

  it('lets an allowed range through', async () => {
    expect(await lookup(answers('10.0.0.1'), {}, '10.0.0.0/8')).toEqual({
      error: null,
      address: '10.0.0.1',
      family: 4,
    });
  });
});
