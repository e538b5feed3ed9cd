import { GEN_UI_COMPONENT_TYPES, SETTINGS_GROUPS } from '@pack/contracts';
import { call, seededSecret } from '@pack/testkit';
import { SETTINGS, SettingsHarness, startSettings, admin, consumer, owner } from './harness';

/** A non-default value for every field of every group, and what a reader then sees. */
const catalogSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: { components: { type: 'array' } },
};
const written = {
  ldap: {
    ENABLED: true,
    SERVER_URI: 'ldaps://ldap.example.com:636',
    BIND_DN: 'cn=pack,ou=services,dc=example,dc=com',
    BIND_PASSWORD: seededSecret('BIND_PASSWORD', { prefix: 'ldap-bind-passwo', suffix: 'rd-1' }),
    USER_SEARCH_BASE_DN: 'ou=people,dc=example,dc=com',
    GROUP_SEARCH_QUERY_BASE_DN: 'ou=groups,dc=example,dc=com',
  },
  smtp: {
    ENABLED: true,
    EMAIL_HOST: 'smtp.example.com',
    EMAIL_PORT: 465,
    EMAIL_HOST_USER: 'pack@example.com',
    EMAIL_HOST_PASSWORD: seededSecret('EMAIL_HOST_PASSWORD', { prefix: 'smtp-password-', suffix: '1234' }),
    EMAIL_USE_TLS: false,
  },
  feedback: { ENABLED: true, feedback_link: 'https://feedback.example.com/form' },
  oauth: {
    ENABLED: true,
    CLIENT_ID: seededSecret('CLIENT_ID', { prefix: 'pack-client-id-', suffix: '0001' }),
    CLIENT_SECRET: seededSecret('CLIENT_SECRET', { prefix: 'oauth-client-secret-' }),
    ISSUER_URL: 'https://idp.example.com/realms/pack',
    REDIRECT_BASE_URL: 'https://pack.example.com',
  },
  currency: { ENABLED: false, currency: 'GBP' },
  charges: {
    ENABLED: true,
    hide_for_serviceowners: true,
    hide_for_consumers: true,
    only_admins_can_see: true,
  },
  submission_builder: {
    show_submission_builder: false,
    enable_submit_functionality: false,
    default_allow_submit_submission_builder: false,
  },
  service_creator: {
    show_create_service_option: false,
    allow_service_creation: false,
    default_allow_service_creation: false,
  },
  ai_integration: {
    show_ai_validator: true,
    show_ai_processor: false,
    generative_ui_catalog_schema: catalogSchema,
  },
  gui_table: {
    ENABLED: false,
    table_refresh_interval: 120,
    default_filter_states_for_consumers: ['PENDING', 'IN_PROGRESS'],
    default_filter_states_for_serviceowners: [],
  },
  global_banner: { ENABLED: true, message: 'Maintenance on Saturday 06:00-08:00 UTC' },
  external_api: {
    healthcheck_rate_limit_per_minute: 10,
    healthcheck_response_rate_limit: 20,
    webhook_rate_limit_per_minute: 30,
    webhook_response_rate_limit: 40,
    webhook_response_retention: 5,
  },
} as const;
const seen: Record<string, unknown> = {
  ...written,
  ldap: { ...written.ldap, BIND_PASSWORD: '********rd-1' },
  smtp: { ...written.smtp, EMAIL_HOST_PASSWORD: '********1234' },
  oauth: {
    ENABLED: true,
    CLIENT_ID: '********0001',
    ISSUER_URL: 'https://idp.example.com/realms/pack',
    REDIRECT_BASE_URL: 'https://pack.example.com',
  },
  ai_integration: { ...written.ai_integration, show_ai_integration: true },
};

/** The defaults every reader sees before anything is written (the view: no CLIENT_SECRET). */
const DEFAULTS = {
  ldap: {
    ENABLED: false,
    SERVER_URI: '',
    BIND_DN: '',
    BIND_PASSWORD: '',
    USER_SEARCH_BASE_DN: '',
    GROUP_SEARCH_QUERY_BASE_DN: '',
  },
  smtp: {
    ENABLED: false,
    EMAIL_HOST: '',
    EMAIL_PORT: 587,
    EMAIL_HOST_USER: '',
    EMAIL_HOST_PASSWORD: '',
    EMAIL_USE_TLS: true,
  },
  feedback: { ENABLED: false, feedback_link: '' },
  oauth: { ENABLED: false, CLIENT_ID: '', ISSUER_URL: '', REDIRECT_BASE_URL: '' },
  currency: { ENABLED: true, currency: 'USD' },
  charges: {
    ENABLED: false,
    hide_for_serviceowners: false,
    hide_for_consumers: false,
    only_admins_can_see: false,
  },
  submission_builder: {
    show_submission_builder: true,
    enable_submit_functionality: true,
    default_allow_submit_submission_builder: true,
  },
  service_creator: {
    show_create_service_option: true,
    allow_service_creation: true,
    default_allow_service_creation: true,
  },
  ai_integration: {
    show_ai_validator: true,
    show_ai_processor: true,
    show_ai_integration: true,
    generative_ui_catalog_schema: null,
  },
  gui_table: {
    ENABLED: true,
    table_refresh_interval: 30,
    default_filter_states_for_consumers: [],
    default_filter_states_for_serviceowners: ['PENDING'],
  },
  global_banner: { ENABLED: false, message: '' },
  external_api: {
    healthcheck_rate_limit_per_minute: 60,
    healthcheck_response_rate_limit: 60,
    webhook_rate_limit_per_minute: 60,
    webhook_response_rate_limit: 120,
    webhook_response_retention: 100,
  },
};

describe('general settings service', () => {
  // The settings are one document: every test gets a service of its own (it starts in ~0.1 s).
  let settings: SettingsHarness;
  beforeEach(async () => {
    settings = await startSettings();
  });
  afterEach(async () => {
    await settings.stop();
  });

  const version = async () => Number((await settings.get()).headers.get('x-settings-version'));
  const storedVersions = async () => (await settings.versionDocuments()).length;

  describe('reading', () => {
    it('answers every group with its defaults, version 0, to every signed-in role', async () => {
      for (const principal of [admin, owner, consumer]) {
        const { status, body, headers } = await settings.get(principal);
        expect(status).toBe(200);
        expect(headers.get('x-settings-version')).toBe('0');
        expect(Object.keys(body)).toEqual(Object.keys(DEFAULTS));
        expect(body).toEqual(DEFAULTS);
      }
    });

    it('refuses a caller without valid principal headers with 401 problem+json', async () => {
      const anonymous = await settings.as(null, 'GET', SETTINGS);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('content-type')).toContain('application/problem+json');
      const forged = await settings.as(null, 'GET', SETTINGS, undefined, {
        'x-pack-principal': Buffer.from(JSON.stringify(admin)).toString('base64url'),
        'x-pack-timestamp': String(Date.now()),
        'x-pack-signature': 'forged',
      });
      expect(forged.status).toBe(401);
    });
  });

  describe('writing', () => {
    it.each(SETTINGS_GROUPS)('round-trips the %s group', async (group) => {
      const before = await version();
      const patched = await settings.patch({ [group]: written[group] });
      expect(patched.status).toBe(200);
      expect(patched.body[group]).toEqual(seen[group]);
      expect(Number(patched.headers.get('x-settings-version'))).toBe(before + 1);
      // Admins see the last four characters of a secret; other roles: secret-masks.test.ts.
      const read = await settings.get(admin);
      expect(read.body[group]).toEqual(seen[group]);
      expect(read.headers.get('x-settings-version')).toBe(String(before + 1));
    });

    it('keeps every group when others change: one PATCH per group ends with all of them written', async () => {
      for (const group of SETTINGS_GROUPS)
        expect((await settings.patch({ [group]: written[group] })).status).toBe(200);
      const { body } = await settings.get();
      expect(body).toEqual(seen);
      expect(await version()).toBe(SETTINGS_GROUPS.length);
    });

    it('a PATCH that changes nothing (same values, masked secrets sent back) stores no new version', async () => {
      await settings.patch({ currency: written.currency, ldap: written.ldap, smtp: written.smtp });
      const before = await storedVersions();
      const { body: current, headers } = await settings.get();
      const again = await settings.patch({
        currency: current.currency,
        ldap: current.ldap,
        smtp: current.smtp,
      });
      expect(again.status).toBe(200);
      expect(again.headers.get('x-settings-version')).toBe(headers.get('x-settings-version'));
      expect(await storedVersions()).toBe(before);
    });

    it('derives show_ai_integration from the AI features and refuses to write it', async () => {
      const off = await settings.patch({
        ai_integration: { show_ai_validator: false, show_ai_processor: false },
      });
      expect(off.body.ai_integration.show_ai_integration).toBe(false);
      const on = await settings.patch({ ai_integration: { show_ai_processor: true } });
      expect(on.body.ai_integration.show_ai_integration).toBe(true);
      expect((await settings.get(consumer)).body.ai_integration.show_ai_integration).toBe(true);

      const before = await storedVersions();
      const written = await settings.patch({
        ai_integration: { show_ai_processor: false, show_ai_integration: true },
      });
      expect(written.status).toBe(400);
      expect(written.body.errors).toEqual({
        'ai_integration.show_ai_integration': [expect.stringContaining('derived')],
      });
      expect(await storedVersions()).toBe(before);
      expect((await settings.get()).body.ai_integration.show_ai_processor).toBe(true);
    });

    it('lets two writers change different groups at the same time without losing either', async () => {
      const before = await version();
      const patches = [
        { currency: { currency: 'EUR' } },
        { global_banner: { message: 'Concurrent banner' } },
        { external_api: { webhook_response_retention: 77 } },
        { gui_table: { table_refresh_interval: 45 } },
        { charges: { hide_for_consumers: true } },
        { feedback: { feedback_link: 'https://feedback.example.com/concurrent' } },
        { smtp: { EMAIL_PORT: 2525 } },
        { service_creator: { allow_service_creation: false } },
      ];
      const answers = await Promise.all(patches.map((patch) => settings.patch(patch)));
      expect(answers.map((a) => a.status)).toEqual(patches.map(() => 200));
      const versions = answers.map((a) => Number(a.headers.get('x-settings-version'))).sort((a, b) => a - b);
      expect(versions).toEqual(patches.map((_, i) => before + i + 1));
      const { body } = await settings.get();
      expect(body.currency.currency).toBe('EUR');
      expect(body.global_banner.message).toBe('Concurrent banner');
      expect(body.external_api.webhook_response_retention).toBe(77);
      expect(body.gui_table.table_refresh_interval).toBe(45);
      expect(body.charges.hide_for_consumers).toBe(true);
      expect(body.feedback.feedback_link).toBe('https://feedback.example.com/concurrent');
      expect(body.smtp.EMAIL_PORT).toBe(2525);
      expect(body.service_creator.allow_service_creation).toBe(false);
    });

    it('answers 304 to a revalidation while the version is unchanged', async () => {
      const first = await settings.get();
      const etag = first.headers.get('etag')!;
      expect(etag).toBeTruthy();
      const same = await settings.as(admin, 'GET', SETTINGS, undefined, { 'if-none-match': etag });
      expect(same.status).toBe(304);
      await settings.patch({ global_banner: { message: 'Changed after the ETag' } });
      const changed = await settings.as(admin, 'GET', SETTINGS, undefined, { 'if-none-match': etag });
      expect(changed.status).toBe(200);
      expect(changed.body.global_banner.message).toBe('Changed after the ETag');
    });
  });

  describe('bad input stores nothing', () => {
    const cases: [string, unknown, string, RegExp?][] = [
      ['an unknown group', { nonexistent: { ENABLED: true } }, 'nonexistent'],
      ['an unknown field', { ldap: { PASSWORD: 'x' } }, 'ldap.PASSWORD'],
      ['a wrong type', { smtp: { EMAIL_PORT: '25' } }, 'smtp.EMAIL_PORT'],
      ['a port out of range', { smtp: { EMAIL_PORT: 70000 } }, 'smtp.EMAIL_PORT', /at most 65535/],
      [
        'a refresh interval out of range',
        { gui_table: { table_refresh_interval: 1 } },
        'gui_table.table_refresh_interval',
        /at least 5/,
      ],
      [
        'a retention of zero',
        { external_api: { webhook_response_retention: 0 } },
        'external_api.webhook_response_retention',
      ],
      [
        'a rate limit that is not an integer',
        { external_api: { webhook_rate_limit_per_minute: 1.5 } },
        'external_api.webhook_rate_limit_per_minute',
      ],
      [
        'a feedback link that is not an http(s) URL',
        { feedback: { feedback_link: 'not a url' } },
        'feedback.feedback_link',
      ],
      [
        'an LDAP URI with another scheme',
        { ldap: { SERVER_URI: 'https://ldap.example.com' } },
        'ldap.SERVER_URI',
      ],
      [
        'a currency outside USD, EUR, GBP',
        { currency: { currency: 'JPY' } },
        'currency.currency',
        /USD, EUR, GBP/,
      ],
      [
        'a filter state that is no Change Instance state',
        { gui_table: { default_filter_states_for_consumers: ['DONE'] } },
        'gui_table.default_filter_states_for_consumers.0',
      ],
      [
        'a catalog schema that is not a JSON Schema',
        { ai_integration: { generative_ui_catalog_schema: { type: 'nope' } } },
        'ai_integration.generative_ui_catalog_schema',
        /not a valid JSON Schema/,
      ],
      ['a group that is not an object', { ldap: true }, 'ldap'],
      [
        'a valid field next to an invalid one',
        { currency: { currency: 'USD' }, smtp: { EMAIL_PORT: -1 } },
        'smtp.EMAIL_PORT',
      ],
      [
        'enabling SMTP without a host',
        { smtp: { ENABLED: true, EMAIL_HOST: '' } },
        'smtp.EMAIL_HOST',
        /required while smtp.ENABLED/,
      ],
    ];

    // Every row has four cells, so jest never mistakes the last parameter for a done callback.
    const rows = cases.map(([name, body, field, message]) => [name, body, field, message ?? null] as const);
    it.each(rows)('refuses %s with 400 naming the field', async (_name, body, field, message) => {
      // The relay and snapshot pruning touch earlier versions in the background; nothing stored = no new version.
      const before = (await settings.versionDocuments()).map((d) => d._id);
      const shown = (await settings.get()).body;
      const { status, body: problem, headers } = await settings.patch(body);
      expect(status).toBe(400);
      expect(headers.get('content-type')).toContain('application/problem+json');
      expect(problem).toMatchObject({ status: 400, type: expect.any(String), title: expect.any(String) });
      expect(Object.keys(problem.errors)).toEqual([field]);
      if (message) expect(problem.errors[field].join(' ')).toMatch(message);
      expect((await settings.versionDocuments()).map((d) => d._id)).toEqual(before);
      expect((await settings.get()).body).toEqual(shown);
    });

    it('refuses a body that is not an object, and a body that is not JSON', async () => {
      const before = await storedVersions();
      const array = await settings.patch([{ currency: { currency: 'EUR' } }]);
      expect(array.status).toBe(400);
      expect(array.body.errors).toEqual({ '(body)': [expect.any(String)] });
      const response = await call(settings.url, 'PATCH', SETTINGS, {
        principal: admin,
        raw: 'currency=EUR',
        headers: { 'content-type': 'text/plain' },
      });
      expect(response.status).toBe(415);
      expect(await storedVersions()).toBe(before);
    });

    it('refuses a PATCH from a service owner or a consumer with 403, and without principal with 401', async () => {
      const before = await storedVersions();
      for (const principal of [owner, consumer]) {
        const { status, body } = await settings.patch({ currency: { currency: 'USD' } }, principal);
        expect(status).toBe(403);
        expect(body).toMatchObject({ status: 403 });
      }
      expect((await settings.as(null, 'PATCH', SETTINGS, { currency: { currency: 'USD' } })).status).toBe(
        401,
      );
      expect(await storedVersions()).toBe(before);
    });
  });

  describe('audit', () => {
    const AUDITED = seededSecret('an audited EMAIL_HOST_PASSWORD', { prefix: 'audited-secret-' });
    it('shows admins who changed which fields when, newest first, without secret values', async () => {
      await settings.patch({ ldap: written.ldap, oauth: written.oauth, smtp: written.smtp });
      await settings.patch({ currency: written.currency });
      await settings.patch({
        smtp: { EMAIL_HOST_PASSWORD: AUDITED, EMAIL_HOST_USER: 'audited@example.com' },
      });
      const { status, body } = await settings.as(admin, 'GET', `${SETTINGS}audit/?limit=2`);
      expect(status).toBe(200);
      expect(body.count).toBe(await storedVersions());
      expect(body.next).toBe(`${SETTINGS}audit/?limit=2&after=${body.results[1].version}`);
      expect(body.results).toHaveLength(2);
      const [latest, previous] = body.results;
      expect(latest.version).toBeGreaterThan(previous.version);
      expect(latest).toEqual({
        version: expect.any(Number),
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
        actor: admin,
        action: 'update',
        groups: ['smtp'],
        changes: [
          { field: 'smtp.EMAIL_HOST_USER', old: 'pack@example.com', new: 'audited@example.com' },
          { field: 'smtp.EMAIL_HOST_PASSWORD', secret: true },
        ],
      });
      const everything = await settings.as(admin, 'GET', `${SETTINGS}audit/?limit=500`);
      const text = JSON.stringify(everything.body);
      for (const secret of [
        AUDITED,
        written.ldap.BIND_PASSWORD,
        written.oauth.CLIENT_SECRET,
        written.oauth.CLIENT_ID,
      ]) {
        expect(text).not.toContain(secret);
      }
      expect(everything.body.results.map((entry: { version: number }) => entry.version)).toEqual([3, 2, 1]);
      expect([...everything.body.results.at(-1).groups].sort()).toEqual(['ldap', 'oauth', 'smtp']);
    });

    it('is for admins only', async () => {
      for (const principal of [owner, consumer]) {
        expect((await settings.as(principal, 'GET', `${SETTINGS}audit/`)).status).toBe(403);
      }
      expect((await settings.as(null, 'GET', `${SETTINGS}audit/`)).status).toBe(401);
    });
  });

  it('knows the component registry it generates from', () => {
    expect(GEN_UI_COMPONENT_TYPES).toEqual([
      'heading',
      'text',
      'alert',
      'key_value',
      'table',
      'list',
      'code',
      'badge',
      'metric',
      'progress',
      'link',
      'divider',
    ]);
  });
});
