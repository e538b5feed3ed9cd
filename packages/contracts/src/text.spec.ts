import { z } from 'zod';
import { processorCreateSchema, processorPatchSchema } from './processors';
import { jsonBytes, nonBlankText, storedText, storedTextChecks } from './text';

const NUL = 'must not contain the NUL character (\\u0000)';
const SURROGATE = 'must be well-formed Unicode: no unpaired surrogate such as \\ud800';
const messages = (schema: z.ZodType, value: unknown) =>
  schema.safeParse(value).error?.issues.map((issue) => issue.message) ?? [];

describe('storedText', () => {
  it('accepts any well-formed text, astral characters (surrogate pairs) included', () => {
    for (const value of ['', 'plain', 'café ünïcode', 'emoji 🚀 and 𝄞', '\u0001\u001f\u007f', '\ufffd\uffff'])
      expect(storedText().parse(value)).toBe(value);
  });

  it('refuses the NUL character anywhere', () => {
    for (const value of ['\u0000', 'a\u0000', '\u0000b', 'a\u0000b'])
      expect(messages(storedText(), value)).toEqual([NUL]);
  });

  it('refuses unpaired surrogates, high or low, alone, at the ends or reversed', () => {
    for (const value of ['\ud800', 'a\udbff', '\udc00b', 'a\udfffb', '\udc00\ud800', '🚀'.slice(0, 1)])
      expect(messages(storedText(), value)).toEqual([SURROGATE]);
    expect(messages(storedText(), '\u0000\ud800')).toEqual([NUL, SURROGATE]);
  });

  it('keeps the checks chained after it: trim, length limits, refinements', () => {
    const name = storedText().trim().min(1).max(5);
    expect(name.parse('  abc  ')).toBe('abc');
    expect(messages(name, '   ')).toHaveLength(1);
    expect(messages(name, 'abcdef')).toHaveLength(1);
    expect(messages(name, ' a\u0000 ')).toEqual([NUL]);
    expect(messages(storedText().max(1), '\u0000\u0000')).toEqual([NUL, expect.stringMatching(/1/)]);
  });

  it('lends its checks to other string types', () => {
    const url = z
      .url()
      .max(100)
      .check(...storedTextChecks());
    expect(url.parse('https://example.com/a')).toBe('https://example.com/a');
    expect(messages(url, 'https://example.com/\u0000')).toEqual([NUL]);
    expect(messages(url, 'https://example.com/\ud800')).toEqual([SURROGATE]);
  });

  it('guards the AI processor name and prompt and their limits', () => {
    const body = { name: 'Config', service: 1, kind: 'config', llm_model: 1 };
    expect(processorCreateSchema.safeParse(body).success).toBe(true);
    for (const field of ['name', 'prompt']) {
      for (const [value, message] of [
        ['a\u0000b', NUL],
        ['a\ud800b', SURROGATE],
      ] as const) {
        const created = processorCreateSchema.safeParse({ ...body, [field]: value });
        const patched = processorPatchSchema.safeParse({ [field]: value });
        for (const { error } of [created, patched])
          expect(error?.issues.map(({ path, message }) => [path.join('.'), message])).toEqual([
            [field, message],
          ]);
      }
    }
    expect(processorCreateSchema.safeParse({ ...body, name: 'x'.repeat(201) }).success).toBe(false);
    expect(processorCreateSchema.safeParse({ ...body, name: ' 🚀 ' }).data?.name).toBe('🚀');
  });
});

describe('jsonBytes', () => {
  it('counts the UTF-8 bytes of the JSON text, escapes included', () => {
    expect(jsonBytes('abc')).toBe(5);
    expect(jsonBytes('é')).toBe(4);
    expect(jsonBytes('🚀')).toBe(6);
    expect(jsonBytes({ a: '\u0000' })).toBe('{"a":"\\u0000"}'.length);
    expect(jsonBytes('\ud800')).toBe('"\\ud800"'.length);
  });
});

describe('nonBlankText: the document and the server take the same text', () => {
  const name = nonBlankText(5);
  const documented = z.toJSONSchema(name, { io: 'input' }) as { maxLength: number; pattern: string };
  const documentTakes = (value: string) =>
    value.length <= documented.maxLength && new RegExp(documented.pattern, 'u').test(value);

  it.each([
    ['', false],
    [' ', false],
    ['\t\n\r\v\f', false],
    ['\u00a0\u2002\u3000\ufeff\u2028', false],
    ['a', true],
    ['  abc', true],
    ['\u001c', true],
    ['a\u0000', false],
    ['abcdef', false],
    ['  abcd', false],
  ])('%j: taken by both or refused by both', (value, taken) => {
    expect({ document: documentTakes(value), server: name.safeParse(value).success }).toEqual({
      document: taken,
      server: taken,
    });
  });

  it('stores the text without surrounding white space, and names what is wrong', () => {
    expect(name.parse(' a b ')).toBe('a b');
    expect(messages(name, '   ')).toEqual(['must not be empty or only white space']);
    expect(messages(name, ' a\u0000')).toEqual([NUL]);
  });
});
