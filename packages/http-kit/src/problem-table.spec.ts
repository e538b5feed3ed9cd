import { PROBLEM_TABLE, problemSchema, problemTable } from './problem';

describe('problemTable: one problem table for every route file', () => {
  it('gives the shared words of each status asked for, with the problem schema', () => {
    expect(problemTable()(400, 401)).toEqual({
      400: { description: PROBLEM_TABLE[400], schema: problemSchema },
      401: { description: PROBLEM_TABLE[401], schema: problemSchema },
    });
  });

  it("words a status the route file's own way where it says so, and only the statuses asked for", () => {
    const problems = problemTable({ 404: 'No such LLM model', 502: 'The provider failed' });
    expect(problems(403, 404, 502)).toEqual({
      403: { description: PROBLEM_TABLE[403], schema: problemSchema },
      404: { description: 'No such LLM model', schema: problemSchema },
      502: { description: 'The provider failed', schema: problemSchema },
    });
  });

  it('refuses a status no table words (a programming error, caught when the routes are declared)', () => {
    expect(() => problemTable()(418)).toThrow('no problem description for status 418');
  });
});
