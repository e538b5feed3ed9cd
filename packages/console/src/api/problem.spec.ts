import { ApiError, describe as describeProblem } from './problem';

describe('API errors in words', () => {
  it('says what the platform said, with the fields it names', () => {
    const error = new ApiError(400, {
      title: 'Bad Request',
      status: 400,
      detail: 'the request body is invalid',
      errors: { 'extra_data.base_url': ['must be an http(s) URL'], name: ['required'], other: ['x'] },
    });
    expect(error.message).toBe('the request body is invalid.');
    expect(error.fieldErrors('extra_data')).toEqual(['extra_data.base_url: must be an http(s) URL']);
    expect(error.fieldErrors('extra_data.base_url')).toEqual(['must be an http(s) URL']);
    expect(error.fieldErrors('name')).toEqual(['required']);
    expect(error.otherFieldErrors(['name', 'extra_data'])).toEqual(['other: x']);
  });

  it('falls back to what the status means, and names an unreachable gateway', () => {
    expect(describeProblem(503, {})).toMatch(/unavailable/);
    expect(describeProblem(0, {})).toMatch(/cannot be reached/);
    expect(describeProblem(500, { title: 'Internal Server Error', error_id: 'e1' })).toBe(
      'Internal Server Error. (error id e1)',
    );
    expect(new ApiError(429, 'not json', '12').retryAfter).toBe(12);
  });
});
