import { offeredKinds, parseSchema, schemaRule } from './processor-rules';

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

describe('the kinds the processor form offers', () => {
  it('offers the validator by show_ai_validator and the other kinds by show_ai_processor', () => {
    const processorKinds = ['config', 'verify', 'execution', 'pack_optimizer', 'universal_executor'];
    expect(offeredKinds({ show_ai_validator: false, show_ai_processor: true })).toEqual(processorKinds);
    expect(offeredKinds({ show_ai_validator: true, show_ai_processor: false })).toEqual([
      'change_instance_validator',
    ]);
    expect(offeredKinds({ show_ai_validator: false, show_ai_processor: false }, 'verify')).toEqual([
      'verify',
    ]);
  });
});
