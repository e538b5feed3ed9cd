import { parseSchema, schemaRule } from './processor-rules';

describe('the AI processor schema editor', () => {
  it('follows the kind: none for a validator, ignored for a universal executor, optional for stages', () => {
    expect(schemaRule('change_instance_validator').allowed).toBe(false);
    expect(schemaRule('universal_executor')).toMatchObject({
      allowed: true,
      note: expect.stringMatching(/^Ignored/),
    });
    expect(schemaRule('config').note).toMatch(/^Optional/);
  });

  it('takes an empty text as no schema and a JSON Schema object as is', () => {
    expect(parseSchema('  ')).toBeNull();
    expect(parseSchema('{"type":"object","required":["a"]}')).toEqual({ type: 'object', required: ['a'] });
  });

  it('refuses text that is not JSON, or JSON that is no schema, naming response_schema', () => {
    for (const text of ['{', '[1]', '{"type":"thing"}', '{"required":"a"}']) {
      let caught: any;
      try {
        parseSchema(text);
      } catch (error) {
        caught = error;
      }
      expect(caught.fieldErrors('response_schema')).toHaveLength(1);
    }
  });
});
