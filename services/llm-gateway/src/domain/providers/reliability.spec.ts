import {
  ProviderEmptyOutputError,
  ProviderHttpError,
  ProviderNetworkError,
  ProviderTimeoutError,
} from '@pack/llm-providers';
import { backoffMs, isRetryable, withRetries } from './reliability';

const policy = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 1_000 };

describe('retry policy', () => {
  it('retries network errors, 429 and 5xx, and nothing else', () => {
    expect(isRetryable(new ProviderNetworkError('reset'))).toBe(true);
    expect(isRetryable(new ProviderNetworkError('refused by the URL guard', 'TARGET_REFUSED'))).toBe(false);
    expect(isRetryable(new ProviderHttpError('slow down', 429))).toBe(true);
    expect(isRetryable(new ProviderHttpError('down', 503))).toBe(true);
    expect(isRetryable(new ProviderHttpError('bad', 400))).toBe(false);
    expect(isRetryable(new ProviderHttpError('no key', 401))).toBe(false);
    expect(isRetryable(new ProviderEmptyOutputError('nothing'))).toBe(false);
    expect(isRetryable(new ProviderTimeoutError('late'))).toBe(false);
  });

  it('doubles the backoff with jitter and honours Retry-After up to the cap', () => {
    const plain = new ProviderNetworkError('reset');
    expect(backoffMs(policy, 0, plain, () => 1)).toBe(10);
    expect(backoffMs(policy, 3, plain, () => 1)).toBe(80);
    expect(backoffMs(policy, 3, plain, () => 0.5)).toBe(40);
    expect(backoffMs(policy, 20, plain, () => 1)).toBe(1_000);
    expect(backoffMs(policy, 0, new ProviderHttpError('slow', 429, 0.5), () => 0)).toBe(500);
    expect(backoffMs(policy, 0, new ProviderHttpError('slow', 429, 3600), () => 0)).toBe(1_000);
  });

  it('stops after the bounded number of attempts', async () => {
    let calls = 0;
    const failing = () => {
      calls += 1;
      return Promise.reject(new ProviderHttpError('down', 502));
    };
    await expect(withRetries(failing, policy)).rejects.toThrow('down');
    expect(calls).toBe(3);
  });
});
