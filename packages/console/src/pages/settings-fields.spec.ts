import { changesOf, SETTINGS_HINTS, type Draft } from './settings-fields';

const base = (): Draft => ({
  global_banner: { ENABLED: false, message: '' },
  oauth: { ENABLED: false, CLIENT_ID: '', CLIENT_SECRET: '' },
  ai_integration: { show_ai_integration: true, generative_ui_catalog_schema: 'null' },
});

describe('the general settings editor', () => {
  it('sends only what changed, secrets only when typed, never the calculated flag', () => {
    const after = base();
    after.global_banner!.ENABLED = true;
    after.global_banner!.message = 'Maintenance at 18:00';
    after.oauth!.CLIENT_SECRET = 's3cret';
    after.ai_integration!.show_ai_integration = false;
    expect(changesOf(base(), after)).toEqual({
      patch: {
        global_banner: { ENABLED: true, message: 'Maintenance at 18:00' },
        oauth: { CLIENT_SECRET: 's3cret' },
      },
      errors: {},
    });
  });

  it('parses the catalog schema and names it when it is not JSON', () => {
    const after = base();
    after.ai_integration!.generative_ui_catalog_schema = '{"type":"object"}';
    expect(changesOf(base(), after).patch).toEqual({
      ai_integration: { generative_ui_catalog_schema: { type: 'object' } },
    });
    after.ai_integration!.generative_ui_catalog_schema = '{';
    expect(Object.keys(changesOf(base(), after).errors)).toEqual([
      'ai_integration.generative_ui_catalog_schema',
    ]);
  });
});

describe('the hints of the sign-in settings', () => {
  it('shows the redirect URI to register, from the redirect base or else this address', () => {
    const hint = SETTINGS_HINTS['oauth.REDIRECT_BASE_URL']!;
    expect(hint('https://pack.example.com/', 'http://localhost:8080')).toMatch(
      /^Register https:\/\/pack\.example\.com\/v1\/core\/auth\/oidc\/callback\/ as the redirect URI/,
    );
    expect(hint('', 'http://localhost:8080')).toMatch(
      /^Register http:\/\/localhost:8080\/v1\/core\/auth\/oidc\/callback\/ /,
    );
  });
});
