import type { CallStore } from '../calls/store';
import { Generation, type GenerationDeps } from './generation';

/**
 * A claim won only after its lease ran out: the database took the insert, but its answer was held
 * up (a network partition between the replica and the database) while another replica took the
 * request over and called the provider.
 */
describe('a claim whose answer came after its lease ran out', () => {
  const LEASE_MS = 300;
  const request = {
    request_id: 'req-1',
    llm_model_id: 1,
    messages: [{ role: 'user' as const, content: 'Say hello.' }],
    response_schema: null,
    processor_id: null,
    reply_to: null,
  };

  function generation(renewed: boolean) {
    const adapterFor = jest.fn(() => {
      throw new Error('the provider was called');
    });
    const renew = jest.fn(async () => renewed);
    const calls = {
      // The insert's answer arrives one and a half leases late.
      insertClaim: () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), LEASE_MS * 1.5)),
      renew,
    } as unknown as CallStore;
    const deps = {
      calls,
      profiles: { get: async () => ({ id: 1, provider: 'vendor1', fallbacks: [] }) },
      adapterFor,
      leaseMs: LEASE_MS,
      owner: 'replica-a',
      currency: () => 'USD',
      unexpected: () => undefined,
    } as unknown as GenerationDeps;
    return { generation: new Generation(deps), adapterFor, renew };
  }

  it('is confirmed before the provider is called, and taken over meanwhile, it calls nothing', async () => {
    const { generation: replica, adapterFor, renew } = generation(false);
    expect(await replica.handle(request as never)).toBe('held');
    expect(renew).toHaveBeenCalledWith('req-1', 'replica-a', expect.any(Date));
    expect(adapterFor).not.toHaveBeenCalled();
  });
});
