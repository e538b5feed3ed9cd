import { readFileSync } from 'node:fs';
import { startStack, type Stack } from '../stack';
import { API_TYPES_FILE, apiTypesOf } from './api-types';

/** The console is typed against the API it calls: its generated types match the live document. */
describe('the console client types', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('are what openapi-typescript makes of /v1/openapi.json now (else run `pnpm console:api-types`)', async () => {
    const committed = readFileSync(API_TYPES_FILE, 'utf8');
    const current = await apiTypesOf(stack);
    // A stale file fails with the first line that differs, not a diff of thousands of lines.
    const [currentLines, committedLines] = [current.split('\n'), committed.split('\n')];
    const first = currentLines.findIndex((line, index) => line !== committedLines[index]);
    expect({ stale: first !== -1, line: first + 1, expected: currentLines[first] }).toEqual({
      stale: false,
      line: 0,
      expected: undefined,
    });
    expect(current).toContain('"/v1/core/me/"');
    expect(current).toContain('"/v1/ai/dashboard/"');
  });
});
