import { stringifyExactJson } from '@pack/contracts';
import { extractJson } from './extract-json';

describe('extractJson: the one JSON value of a reply', () => {
  it.each([
    ['bare JSON with spaces around', '  {"a":1}\n', { a: 1 }],
    ['a json fence', '```json\n{"a":1}\n```', { a: 1 }],
    ['an unlabelled fence after prose', 'Sure!\n```\n[1, 2]\n```\nAnything else?', [1, 2]],
    ['an object after leading prose', 'Here is the data: {"a": "x}y"} ', { a: 'x}y' }],
    ['braces inside strings and escapes', 'Result: {"a":"\\"{[","b":[{}]}', { a: '"{[', b: [{}] }],
  ])('reads %s', (_name, text, expected) => {
    expect(extractJson(text)).toEqual({ ok: true, value: expected });
  });

  it('keeps numbers digit for digit', () => {
    const json = '{"id":1234567890123456789012,"ratio":0.12345678901234567890}';
    const out = extractJson(`Here it is:\n\`\`\`json\n${json}\n\`\`\``);
    expect(out.ok && stringifyExactJson(out.value)).toBe(json);
  });

  it.each([
    ['two objects in prose', 'Either {"a":1} or {"a":2}.', '2 JSON values'],
    ['two code blocks', '```json\n{"a":1}\n```\nor\n```json\n{"a":2}\n```', '2 code blocks'],
    ['a fence that is not JSON', '```json\n{a: 1}\n```', 'code block is not valid JSON'],
    ['prose only', 'I cannot help with that.', 'not JSON'],
    ['an unclosed object', 'Here: {"a": 1', 'not JSON'],
  ])('refuses %s', (_name, text, problem) => {
    const out = extractJson(text);
    expect(out.ok).toBe(false);
    expect(!out.ok && out.problem).toContain(problem);
  });
});
