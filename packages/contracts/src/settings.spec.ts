import {
  defaultGeneralSettings,
  GEN_UI_CATALOG_SCHEMA_MAX_BYTES,
  generalSettingsPatchSchema,
  generalSettingsSchema,
  generalSettingsViewSchema,
  jsonSchemaProblems,
  SETTINGS_GROUPS,
} from './settings';
import { z } from 'zod';
import { jsonBytes } from './text';

const errorsOf = (body: unknown) => {
  const result = generalSettingsPatchSchema.safeParse(body);
  if (result.success) return {};
  const errors: Record<string, string[]> = {};
  for (const issue of result.error.issues) {
    const keys =
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((k) => [...issue.path, k].join('.'))
        : [issue.path.join('.')];
    for (const key of keys) (errors[key] ??= []).push(issue.message);
  }
  return errors;
};

describe('general settings schemas', () => {
  it('fill every group of spec 2.8 with documented defaults', () => {
    const defaults = defaultGeneralSettings();
    expect(Object.keys(defaults)).toEqual(SETTINGS_GROUPS);
    expect(SETTINGS_GROUPS).toHaveLength(12);
    expect(defaults.smtp).toEqual({
      ENABLED: false,
      EMAIL_HOST: '',
      EMAIL_PORT: 587,
      EMAIL_HOST_USER: '',
      EMAIL_HOST_PASSWORD: '',
      EMAIL_USE_TLS: true,
    });
    expect(defaults.gui_table.default_filter_states_for_serviceowners).toEqual(['PENDING']);
    expect(defaults.external_api.webhook_response_retention).toBe(100);
    expect(generalSettingsSchema.parse(defaults)).toEqual(defaults);
  });

  it('view schema never carries CLIENT_SECRET', () => {
    const oauth = { ENABLED: false, CLIENT_ID: '', ISSUER_URL: '', REDIRECT_BASE_URL: '' };
    const view = { ...defaultGeneralSettings(), oauth };
    expect(generalSettingsViewSchema.parse(view).oauth).toEqual(oauth);
    expect(generalSettingsViewSchema.safeParse(defaultGeneralSettings()).success).toBe(false);
  });

  it('PATCH takes a partial document and fills in nothing', () => {
    expect(generalSettingsPatchSchema.parse({ currency: { currency: 'EUR' } })).toEqual({
      currency: { currency: 'EUR' },
    });
    expect(generalSettingsPatchSchema.parse({})).toEqual({});
  });

  it('PATCH names unknown groups and fields, and refuses the derived flag', () => {
    expect(errorsOf({ nonexistent: {} })).toEqual({ nonexistent: [expect.any(String)] });
    expect(errorsOf({ ldap: { PASSWORD: 'x' } })).toEqual({ 'ldap.PASSWORD': [expect.any(String)] });
    expect(errorsOf({ ai_integration: { show_ai_integration: true } })).toEqual({
      'ai_integration.show_ai_integration': [expect.stringContaining('derived')],
    });
  });

  it('PATCH checks types, ranges, URLs and enumerations', () => {
    expect(Object.keys(errorsOf({ smtp: { EMAIL_PORT: '25' } }))).toEqual(['smtp.EMAIL_PORT']);
    expect(errorsOf({ smtp: { EMAIL_PORT: 70000 } })).toEqual({
      'smtp.EMAIL_PORT': ['must be at most 65535'],
    });
    expect(errorsOf({ gui_table: { table_refresh_interval: 1 } })).toEqual({
      'gui_table.table_refresh_interval': ['must be at least 5 seconds'],
    });
    expect(errorsOf({ feedback: { feedback_link: 'javascript:alert(1)' } })).toEqual({
      'feedback.feedback_link': ['must be an http(s) URL or empty'],
    });
    expect(errorsOf({ currency: { currency: 'JPY' } })).toEqual({
      'currency.currency': ['must be one of USD, EUR, GBP'],
    });
    expect(
      Object.keys(errorsOf({ gui_table: { default_filter_states_for_consumers: ['PENDING', 'DONE'] } })),
    ).toEqual(['gui_table.default_filter_states_for_consumers.1']);
    expect(errorsOf({ gui_table: { default_filter_states_for_consumers: ['PENDING', 'PENDING'] } })).toEqual({
      'gui_table.default_filter_states_for_consumers': ['must not list a state twice'],
    });
    expect(errorsOf({ ldap: { SERVER_URI: 'http://ldap.example.com' } })).toEqual({
      'ldap.SERVER_URI': [expect.stringContaining('ldap://')],
    });
    expect(
      errorsOf({
        ldap: {
          SERVER_URI: 'ldaps://a.example.com:636 ldap://b.example.com',
          BIND_DN: 'cn=admin,dc=example,dc=com',
        },
      }),
    ).toEqual({});
    expect(errorsOf({ smtp: { EMAIL_HOST: 'mail example' } })).toEqual({
      'smtp.EMAIL_HOST': ['must be a host name or IP address, or empty'],
    });
    expect(errorsOf({ ldap: { BIND_DN: 'admin' } })).toEqual({
      'ldap.BIND_DN': ['must be a DN such as ou=people,dc=example,dc=com, or empty'],
    });
    expect(errorsOf({ smtp: { EMAIL_HOST: 'smtp.example.com' } })).toEqual({});
    expect(errorsOf({ external_api: { webhook_response_retention: 0 } })).toEqual({
      'external_api.webhook_response_retention': ['must be at least 1'],
    });
    expect(Object.keys(errorsOf({ ldap: null }))).toEqual(['ldap']);
  });

  it('PATCH accepts a draft-07 catalog schema and refuses one that is not a valid JSON Schema', () => {
    const valid = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { a: { type: 'string' } },
    };
    expect(errorsOf({ ai_integration: { generative_ui_catalog_schema: valid } })).toEqual({});
    expect(errorsOf({ ai_integration: { generative_ui_catalog_schema: null } })).toEqual({});
    for (const invalid of [
      { type: 'nope' },
      { properties: [] },
      { $ref: '#/definitions/missing' },
      { type: 'string', pattern: '(' },
      { $schema: 'https://json-schema.org/draft/2020-12/schema' },
    ]) {
      const errors = errorsOf({ ai_integration: { generative_ui_catalog_schema: invalid } });
      expect(Object.keys(errors)).toEqual(['ai_integration.generative_ui_catalog_schema']);
      for (const message of errors['ai_integration.generative_ui_catalog_schema']!)
        expect(message).toMatch(/^is not a valid JSON Schema: /);
    }
    expect(Object.keys(errorsOf({ ai_integration: { generative_ui_catalog_schema: 'text' } }))).toEqual([
      'ai_integration.generative_ui_catalog_schema',
    ]);
  });

  it('counts the catalog schema limit in UTF-8 bytes of JSON, not in characters', () => {
    const schemaOf = (description: string) => ({ type: 'object', description });
    const room = GEN_UI_CATALOG_SCHEMA_MAX_BYTES - jsonBytes(schemaOf(''));
    // Two-byte characters (é) up to the limit exactly, then one byte more: half as many characters.
    const filler = 'é'.repeat(Math.floor(room / 2)) + 'a'.repeat(room % 2);
    const atLimit = schemaOf(filler);
    const over = schemaOf(`${filler}a`);
    expect(jsonBytes(atLimit)).toBe(GEN_UI_CATALOG_SCHEMA_MAX_BYTES);
    expect(jsonBytes(over)).toBe(GEN_UI_CATALOG_SCHEMA_MAX_BYTES + 1);
    expect(JSON.stringify(over).length).toBeLessThan(GEN_UI_CATALOG_SCHEMA_MAX_BYTES * 0.51);
    expect(errorsOf({ ai_integration: { generative_ui_catalog_schema: atLimit } })).toEqual({});
    expect(errorsOf({ ai_integration: { generative_ui_catalog_schema: over } })).toEqual({
      'ai_integration.generative_ui_catalog_schema': [
        `must be at most ${GEN_UI_CATALOG_SCHEMA_MAX_BYTES} bytes of JSON`,
      ],
    });
  });

  it('refuses the NUL character and lone surrogates in stored settings text, naming the field', () => {
    const fields = {
      ldap: ['SERVER_URI', 'BIND_DN', 'BIND_PASSWORD', 'USER_SEARCH_BASE_DN', 'GROUP_SEARCH_QUERY_BASE_DN'],
      smtp: ['EMAIL_HOST', 'EMAIL_HOST_USER', 'EMAIL_HOST_PASSWORD'],
      feedback: ['feedback_link'],
      oauth: ['CLIENT_ID', 'CLIENT_SECRET'],
      global_banner: ['message'],
    };
    const valid: Record<string, string> = {
      SERVER_URI: 'ldap://ldap.example.com/',
      BIND_DN: 'cn=a,dc=b',
      USER_SEARCH_BASE_DN: 'ou=people,dc=b',
      GROUP_SEARCH_QUERY_BASE_DN: 'ou=groups,dc=b',
      EMAIL_HOST: 'smtp.example.com',
      feedback_link: 'https://feedback.example.com/',
    };
    for (const [group, names] of Object.entries(fields)) {
      for (const field of names) {
        const base = valid[field] ?? 'text';
        expect(errorsOf({ [group]: { [field]: base } })).toEqual({});
        for (const bad of [`${base}\u0000`, `${base}\ud800`]) {
          const errors = errorsOf({ [group]: { [field]: bad } });
          expect(Object.keys(errors)).toEqual([`${group}.${field}`]);
        }
      }
    }
    // A stored value that fails its field type reads as the default (decodeSettings), so the
    // read schema may be as strict as the write schema.
    expect(generalSettingsSchema.shape.global_banner.safeParse({ message: 'a\u0000' }).success).toBe(false);
  });

  it('documents each patterned text field with one pattern, which leaves NUL out as the server does', () => {
    const document = z.toJSONSchema(generalSettingsPatchSchema, { io: 'input' }) as {
      properties: Record<string, { properties: Record<string, Record<string, unknown>> }>;
    };
    const fields = {
      ldap: ['SERVER_URI', 'BIND_DN', 'USER_SEARCH_BASE_DN', 'GROUP_SEARCH_QUERY_BASE_DN'],
      smtp: ['EMAIL_HOST'],
      oauth: ['ISSUER_URL', 'REDIRECT_BASE_URL'],
    };
    const valid: Record<string, string> = {
      SERVER_URI: 'ldap://ldap.example.com/',
      BIND_DN: 'cn=a,dc=b',
      USER_SEARCH_BASE_DN: 'ou=people,dc=b',
      GROUP_SEARCH_QUERY_BASE_DN: 'ou=groups,dc=b',
      EMAIL_HOST: 'smtp.example.com',
      ISSUER_URL: 'https://id.example.com/realm',
      REDIRECT_BASE_URL: 'https://pack.example.com',
    };
    for (const [group, names] of Object.entries(fields))
      for (const field of names) {
        const schema = document.properties[group]!.properties[field]!;
        expect({ field, allOf: schema.allOf }).toEqual({ field, allOf: undefined });
        const pattern = new RegExp(schema.pattern as string, 'u');
        expect({ field, empty: pattern.test(''), valid: pattern.test(valid[field]!) }).toEqual({
          field,
          empty: true,
          valid: true,
        });
        for (const withNul of [
          `${valid[field]}\u0000`,
          `\u0000${valid[field]}`,
          `${valid[field]!.slice(0, 4)}\u0000x`,
        ])
          expect({ field, withNul, documented: pattern.test(withNul) }).toEqual({
            field,
            withNul,
            documented: false,
          });
      }
  });

  it('jsonSchemaProblems says what is wrong', () => {
    expect(jsonSchemaProblems({ type: 'object' })).toEqual([]);
    expect(jsonSchemaProblems([])).toEqual(['must be a JSON Schema object']);
    expect(jsonSchemaProblems({ type: 'nope' }).join(' ')).toContain('/type');
  });
});
