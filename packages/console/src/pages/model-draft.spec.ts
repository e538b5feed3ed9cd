import { ApiError } from '../api/problem';
import { bodyOf, draftOf, EMPTY } from './model-draft';

describe('an LLM model in the form', () => {
  it('sends the provider keys, prices as decimal strings or null, and keeps a stored secret when left empty', () => {
    const draft = {
      ...EMPTY,
      name: 'm',
      model_name: 'x',
      input_price_per_1m_tokens: '0.15',
      extra: { api_key: '', base_url: 'https://h/v1' },
    };
    expect(bodyOf(draft, true)).toMatchObject({
      provider: 'vendor1',
      input_price_per_1m_tokens: '0.15',
      output_price_per_1m_tokens: null,
      extra_data: { api_key: '********', base_url: 'https://h/v1' },
    });
    expect(bodyOf({ ...draft, extra: { ...draft.extra, api_key: 'sk-1' } }, false).extra_data).toEqual({
      api_key: 'sk-1',
      base_url: 'https://h/v1',
    });
  });

  it('names a request payload that is not a JSON object as its field', () => {
    const draft = {
      ...EMPTY,
      provider: 'genai' as const,
      extra: { request_payload: '[1]', verify_ssl: true },
    };
    let caught: any;
    try {
      bodyOf(draft, false);
    } catch (error) {
      caught = error;
    }
    expect(caught.fieldErrors('extra_data.request_payload')).toEqual(['must be a JSON object, such as {}']);
  });

  it('starts an edit with masked secrets blank', () => {
    const model = {
      id: 1,
      name: 'm',
      provider: 'vendor1',
      model_name: 'x',
      prompt: '',
      timeout: 60,
      max_output_tokens: 4096,
      structured_output: 'native',
      input_price_per_1m_tokens: null,
      output_price_per_1m_tokens: null,
      fallback_models: [3, 2] as number[],
      extra_data: { api_key: '********1234', base_url: 'https://h' },
      created_at: '',
      updated_at: '',
    } as const;
    expect(draftOf(model).extra).toEqual({ api_key: '', base_url: 'https://h' });
    expect(draftOf(model).fallback_models).toBe('3, 2');
    expect(bodyOf(draftOf(model), true).fallback_models).toEqual([3, 2]);
    expect(() => bodyOf({ ...draftOf(model), fallback_models: '3, x' }, true)).toThrow(ApiError);
  });
});
