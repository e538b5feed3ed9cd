/**
 * The operator console as an administrator meets it, in Chromium: sign-in, an LLM model against a
 * local fake provider and its connection test, the
 * Global Banner and Feedback link, webhooks and the settings editor. Every page is scanned by
 * axe-core and photographed (test/console/screenshots, kept by CI as artifacts).
 */
import { randomUUID } from 'node:crypto';
import { events } from '@pack/contracts';
import {
  CEILINGS,
  publishEvent,
  Receiver,
  seededSecret,
  startFakeOpenAi,
  waitFor,
  type FakeProviderServer,
} from '@pack/testkit';
import { reservePort, startOidcProvider } from '../sign-in/oidc-provider';
import { expectAccessible, startConsole, type Harness } from './harness';

const KEY = seededSecret('the console model api_key', { prefix: 'sk-console-', suffix: '1234' });
const CLIENT_SECRET = seededSecret('the console CLIENT_SECRET', { prefix: 'console-client-secret-' });

describe('the operator console: administration', () => {
  let h: Harness;
  let fake: FakeProviderServer;
  let receiver: Receiver;
  /** The general settings every test starts from. */
  let baseline: Record<string, unknown>;

  beforeAll(async () => {
    h = await startConsole();
    fake = await startFakeOpenAi({ apiKey: KEY });
    receiver = await new Receiver().start();
    receiver.fallback = { status: 200, body: 'thanks' };
    await h.showAiIntegration();
    baseline = (await h.stack.call('GET', '/v1/core/general_settings/')).body;
  });
  afterAll(async () => {
    await h?.close();
    await fake?.close();
    await receiver?.stop();
  });
  afterEach(async () => {
    h.expectNoBrowserProblems();
    // Every test leaves the settings as it found them.
    expect((await h.stack.call('GET', '/v1/core/general_settings/')).body).toEqual(baseline);
  });

  it('refuses a wrong token in words, then signs in with the admin token and shows every admin page', async () => {
    await h.page.goto(`${h.stack.gateway}/`);
    await h.page.waitForURL(/\/sign-in/);
    await expectAccessible(h, 'sign-in');
    await h.screenshot('sign-in');
    await h.page.getByLabel('API token', { exact: true }).fill('pack_not_a_real_token_000000000000000000000');
    await h.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await h.page
      .getByRole('alert')
      .getByText(/not accepted|token/i)
      .waitFor();

    await h.signIn(h.stack.adminToken, /\/dashboard/);
    const nav = await h.page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
    expect(nav).toEqual([
      'AI Integration',
      'LLM models',
      'AI processors',
      'Pipelines',
      'Change Instances',
      'Webhooks',
      'General settings',
    ]);
    // The token is kept for the browser session only: sessionStorage, nothing in localStorage.
    const stored = await h.page.evaluate(() => [
      (globalThis as any).sessionStorage.getItem('pack.console.token'),
      (globalThis as any).localStorage.length,
    ]);
    expect(stored).toEqual([h.stack.adminToken, 0]);
  });

  it('shows the API field error next to the field, creates a model against the fake provider and tests its connection', async () => {
    await h.signInAs(h.stack.adminToken, /\/dashboard/);
    await h.open('/models/new', 'New LLM model');
    await h.page.getByLabel('Name', { exact: true }).fill('Console model');
    await h.page.getByLabel('Model name at the provider').fill('gpt-4o-mini');
    await h.page.getByLabel('Input price per 1M tokens (empty: unpriced)').fill('0.15');
    await h.page.getByLabel('Output price per 1M tokens (empty: unpriced)').fill('0.6');
    await h.page.getByLabel('API key', { exact: true }).fill(KEY);
    await h.page.getByLabel('Base URL', { exact: true }).fill('ftp://nowhere.example/v1');
    await h.page.getByRole('button', { name: 'Create model' }).click();
    const baseUrl = h.page.getByLabel('Base URL', { exact: true });
    await h.page.locator('.field-invalid .field-error').first().waitFor();
    expect(await baseUrl.getAttribute('aria-invalid')).toBe('true');
    const described = (await baseUrl.getAttribute('aria-describedby'))!
      .split(' ')
      .find((id) => id.endsWith('-error'))!;
    expect(await h.page.locator(`[id="${described}"]`).textContent()).toMatch(/http/);
    await expectAccessible(h, 'model-form-with-error');
    await h.screenshot('model-form-error');

    await baseUrl.fill(`${fake.url}/v1`);
    await h.page.getByRole('button', { name: 'Create model' }).click();
    await h.page.getByRole('heading', { level: 1, name: 'Model Console model' }).waitFor();
    // The stored key is masked; the test goes to the fake provider and shows what it answered.
    await h.page.getByText(/Stored: \*{8}1234/).waitFor();
    await h.page.getByRole('button', { name: 'Test connection' }).click();
    const outcome = h.page.getByTestId('connection-test');
    await outcome.waitFor();
    expect(await outcome.textContent()).toMatch(/Hello from the fake provider\./);
    expect(await outcome.textContent()).toMatch(/answered in \d+ ms.*cost 0\.000006/);
    await expectAccessible(h, 'model');
    await h.screenshot('model');
    await h.open('/models', 'LLM models');
    await h.page.getByRole('link', { name: 'Console model' }).waitFor();
    await expectAccessible(h, 'models');
    await h.screenshot('models');
  });

  it("edits a model's fallbacks: saved in order, a cycle shown next to the field", async () => {
    const create = async (name: string, fallback_models: number[] = []) => {
      const created = await h.stack.call('POST', '/v1/ai/llm_models/', {
        body: {
          name,
          provider: 'vendor1',
          model_name: 'gpt-4o-mini',
          extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
          fallback_models,
        },
      });
      expect(created.status).toBe(201);
      return created.body.id as number;
    };
    const [second, third] = [await create('Fallback one'), await create('Fallback two')];
    const asked = await create('Asked model');
    await h.signInAs(h.stack.adminToken, /\/dashboard/);
    await h.open(`/models/${asked}`, 'Model Asked model');
    const field = h.page.getByLabel('Fallback models (ids of up to 3 other models, in order)');
    await field.fill(`${third}, ${second}`);
    await h.page.getByRole('button', { name: 'Save' }).click();
    await h.page.getByText('Saved.').waitFor();
    expect((await h.stack.call('GET', `/v1/ai/llm_models/${asked}/`)).body.fallback_models).toEqual([
      third,
      second,
    ]);

    // The second model naming the first would close a cycle: the API's reason shows at the field.
    await h.open(`/models/${third}`, 'Model Fallback two');
    await field.fill(String(asked));
    await h.page.getByRole('button', { name: 'Save' }).click();
    await h.page.locator('.field-invalid .field-error').first().waitFor();
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await h.page.locator('.field-invalid .field-error').first().textContent()).toMatch(/cycle/);
    expect((await h.stack.call('GET', `/v1/ai/llm_models/${third}/`)).body.fallback_models).toEqual([]);
    await expectAccessible(h, 'model-fallbacks-error');
    await h.screenshot('model-fallbacks-error');
  });

  it('shows the Global Banner on every page once enabled, and the Feedback link', async () => {
    await h.signInAs(h.stack.adminToken, /\/dashboard/);
    await h.open('/models', 'LLM models');
    expect(await h.page.getByTestId('global-banner').count()).toBe(0);
    await h.withSettings(
      {
        global_banner: { ENABLED: true, message: 'Maintenance tonight at 22:00 UTC' },
        feedback: { ENABLED: true, feedback_link: 'https://feedback.example/pack' },
      },
      async () => {
        // A navigation reads the settings again: no reload.
        await h.page
          .getByRole('navigation', { name: 'Main' })
          .getByRole('link', { name: 'Webhooks' })
          .click();
        await h.page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
        await h.page.getByTestId('global-banner').getByText('Maintenance tonight at 22:00 UTC').waitFor();
        expect(await h.page.getByRole('link', { name: 'Feedback' }).getAttribute('href')).toBe(
          'https://feedback.example/pack',
        );
        await h.open('/settings', 'General settings');
        expect(await h.page.getByTestId('global-banner').textContent()).toBe(
          'Maintenance tonight at 22:00 UTC',
        );
      },
    );
  });

  it('creates a webhook with the short form, triggers it and shows the response with state, status code and body; resends one and recovers the FAILED ones', async () => {
    await h.signInAs(h.stack.adminToken, /\/dashboard/);
    const service = await h.stack.call('POST', '/v1/catalog/services/', { body: { name: 'Console hooks' } });
    expect(service.status).toBe(201);
    await h.open('/webhooks/new', 'New webhook');
    await expectAccessible(h, 'webhook-form');
    await h.page.getByLabel('Name', { exact: true }).fill('Console hook');
    await h.page.getByLabel('Service', { exact: true }).selectOption(String(service.body.id));
    await h.page.getByLabel('Target URL').fill(receiver.url);
    await h.page.getByLabel(/Authorization header value/).fill('Bearer console-receiver');
    await h.page.getByRole('button', { name: 'Create webhook' }).click();
    await h.page.getByRole('heading', { level: 1, name: 'Webhook Console hook created' }).waitFor();
    expect(await h.page.getByLabel('Signing secret').textContent()).toMatch(/^whsec_/);
    await h.page.getByRole('link', { name: 'Open the webhook' }).click();
    await h.page.getByRole('button', { name: 'Trigger now' }).click();
    const row = h.page.getByTestId('webhook-responses').locator('tbody tr').first();
    await row.getByText('OK', { exact: true }).waitFor({ timeout: CEILINGS.wait });
    expect(await row.locator('td').nth(1).textContent()).toBe('200');
    expect(await row.locator('td').nth(2).textContent()).toBe('thanks');
    expect(await h.page.getByText('Bearer console-receiver').count()).toBe(0);
    // Resend and recovery: "resend" on a response and "recover since" on a webhook.
    await h.page.getByRole('button', { name: 'Resend response 1', exact: true }).click();
    await h.page.getByText('Response 1 resent as response 2.').waitFor();
    await row.getByText('manual (resend of #1)').waitFor();
    await row.getByText('OK', { exact: true }).waitFor({ timeout: CEILINGS.wait });
    receiver.next({ status: 400, body: 'not now' });
    await h.page.getByRole('button', { name: 'Trigger now' }).click();
    await row.getByText('FAILED', { exact: true }).waitFor({ timeout: CEILINGS.wait });
    await h.page.getByRole('button', { name: 'Recover since', exact: true }).click();
    await h.page.getByText('Recovery done: 1 of 1 resent').waitFor({ timeout: CEILINGS.wait });
    await row.getByText('manual (resend of #3)').waitFor();
    await expectAccessible(h, 'webhook');
    await h.screenshot('webhook');
  });

  it("lists the webhooks by their Service's name, each with its health: the last delivery's state, failures in a row since when, disabled and why", async () => {
    await h.signInAs(h.stack.adminToken, /\/dashboard/);
    const service = await h.stack.call('POST', '/v1/catalog/services/', { body: { name: 'Checkout API' } });
    const create = async (name: string) => {
      const created = await waitFor(async () => {
        const reply = await h.stack.call('POST', '/v1/external/serviceowner/webhooks/', {
          body: { name, service: service.body.id, target_url: receiver.url },
        });
        return reply.status === 201 ? reply.body : undefined;
      });
      return created.id as number;
    };
    const [healthy, failing, gone] = [
      await create('Healthy hook'),
      await create('Failing hook'),
      await create('Gone hook'),
    ];
    /** One fire at a time, so the receiver's answers go to the fire they are meant for. */
    const fire = async (
      id: number,
      answer: { status: number; body: string },
      done: (hook: any) => boolean,
    ) => {
      receiver.next(answer);
      await h.stack.call('POST', `/v1/external/serviceowner/webhooks/${id}/trigger/`, { body: {} });
      await waitFor(async () => {
        const list = await h.stack.call('GET', '/v1/external/serviceowner/webhooks/?limit=100');
        return done(list.body.results.find((hook: { id: number }) => hook.id === id));
      });
    };
    await fire(healthy, { status: 200, body: 'thanks' }, (hook) => hook.health.last_state === 'OK');
    await fire(failing, { status: 400, body: 'no' }, (hook) => hook.health.failures_in_row === 1);
    await fire(failing, { status: 400, body: 'no' }, (hook) => hook.health.failures_in_row === 2);
    await fire(gone, { status: 410, body: 'gone' }, (hook) => !hook.enabled);

    await h.open('/webhooks', 'Webhooks');
    const cells = async (id: number) => {
      const row = h.page.locator(`tr[data-webhook="${id}"]`);
      return {
        service: (await row.locator('td').first().textContent())!.trim(),
        last: (await row.locator('[data-health="last"]').textContent())!.trim(),
        failures: (await row.locator('[data-health="failures"]').textContent())!.trim(),
        state: (await row.locator('[data-health="enabled"]').textContent())!.trim(),
      };
    };
    expect(await cells(healthy)).toMatchObject({
      service: 'Checkout API',
      failures: 'none',
      state: 'enabled',
    });
    expect((await cells(healthy)).last).toMatch(/^OK /);
    const failures = await cells(failing);
    expect(failures).toMatchObject({ service: 'Checkout API', state: 'enabled' });
    expect(failures.last).toMatch(/^FAILED /);
    expect(failures.failures).toMatch(/^2 failures in a row since \S/);
    expect((await cells(gone)).state).toMatch(/^disabled: .*410/);
    await expectAccessible(h, 'webhooks');
    await h.screenshot('webhooks');
  });

  it('keeps each dashboard figure card its own size: the cost card with unpriced calls does not stretch the others', async () => {
    const unpriced = await h.stack.call('POST', '/v1/ai/llm_models/', {
      body: {
        name: 'Unpriced model',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      },
    });
    expect(unpriced.status).toBe(201);
    // One generate request through the broker: an unpriced call in the dashboard.
    const { AMQP_URL, BROKER_NAMESPACE } = h.stack.service('llm-gateway').context.config as {
      AMQP_URL: string;
      BROKER_NAMESPACE: string;
    };
    await publishEvent(AMQP_URL, BROKER_NAMESPACE, events.llmGenerateRequested, {
      request_id: randomUUID(),
      llm_model_id: unpriced.body.id,
      messages: [{ role: 'user', content: 'Hello?' }],
      response_schema: null,
      processor_id: null,
      reply_to: null,
    });
    await waitFor(
      async () => (await h.stack.call('GET', '/v1/ai/dashboard/')).body.totals.unpriced_calls >= 1,
      {
        what: 'the unpriced call counted',
      },
    );
    await h.signInAs(h.stack.adminToken, /\/dashboard/);
    await h.open('/dashboard', 'AI Integration');
    const cost = h.page.locator('[data-figure="cost"]');
    await cost.getByText(/priced calls only; \d+ unpriced/).waitFor();
    const height = async (key: string) =>
      (await h.page.locator(`[data-figure="${key}"]`).boundingBox())!.height;
    const heights = Object.fromEntries(
      await Promise.all(['calls', 'errors', 'p50', 'cost'].map(async (key) => [key, await height(key)])),
    );
    // The cost card holds its note in small type under the figure; the others keep one figure's height.
    expect(heights.errors).toBe(heights.calls);
    expect(heights.p50).toBe(heights.calls);
    expect(heights.cost).toBeGreaterThan(heights.calls);
    expect(heights.cost).toBeLessThan(heights.calls * 1.8);
    await h.screenshot('dashboard-unpriced', { fullPage: false });
  });

  it('edits every settings group with secrets masked and CLIENT_SECRET write-only, and generates the catalog schema', async () => {
    await h.signInAs(h.stack.adminToken, /\/dashboard/);
    // The banner this test edits is on, with a message of its own; everything the editor changes
    // (the message, CLIENT_SECRET, the generated schema) is patched back afterwards.
    await h.withSettings(
      {
        global_banner: { ENABLED: true, message: 'Maintenance tonight at 22:00 UTC' },
        oauth: { CLIENT_SECRET: '' },
        ai_integration: { generative_ui_catalog_schema: null },
      },
      async () => {
        await h.open('/settings', 'General settings');
        expect(await h.page.locator('fieldset[data-group]').count()).toBe(12);
        // The switches say what they do (0040): the AI switches stop the AI, Charges ENABLED hides costs.
        for (const label of [
          'Change Instance Validator decides (off: a person decides)',
          'AI processors run (off: no AI stage starts)',
          'Hide costs by the rules below (off: everyone sees costs)',
        ])
          await h.page.getByLabel(label, { exact: true }).waitFor();
        const secret = h.page.getByLabel('Client secret (write-only)');
        expect([await secret.inputValue(), await secret.getAttribute('type')]).toEqual(['', 'password']);
        await secret.fill('client-secret-value');
        await h.page.getByLabel('Message', { exact: true }).fill('Maintenance moved to 23:00 UTC');
        await h.page.getByRole('button', { name: 'Save settings' }).click();
        await h.page.getByText(/^Saved: /).waitFor();
        await h.page.getByTestId('global-banner').getByText('Maintenance moved to 23:00 UTC').waitFor();
        const read = await h.stack.call('GET', '/v1/core/general_settings/');
        expect(read.body.oauth).not.toHaveProperty('CLIENT_SECRET');
        expect(await h.page.getByLabel('Client secret (write-only)').inputValue()).toBe('');

        await h.page.getByLabel('Refresh interval (seconds)').fill('1');
        await h.page.getByRole('button', { name: 'Save settings' }).click();
        await h.page.locator('.field-invalid').getByLabel('Refresh interval (seconds)').waitFor();

        await h.page.getByRole('button', { name: 'Generate Schema' }).click();
        await h.page.getByText(/catalog schema was generated/).waitFor();
        expect(await h.page.getByLabel('Generative UI catalog schema (JSON)').inputValue()).toContain(
          '"key_value"',
        );
        await expectAccessible(h, 'settings');
        await h.screenshot('settings');
      },
    );
  });
  it('lets an admin turn on sign-in through the identity provider in General settings (issuer, client, redirect base), then sign in through it and land signed in', async () => {
    const port = await reservePort();
    const provider = await startOidcProvider({
      port,
      clientId: 'pack-console',
      clientSecret: CLIENT_SECRET,
      redirectUri: `${h.stack.gateway}/v1/core/auth/oidc/callback/`,
      accounts: {
        'sub-olivia': {
          preferred_username: 'olivia',
          email: 'olivia@example.com',
          email_verified: true,
          groups: ['admin'],
        },
      },
    });
    const blank = { ENABLED: false, CLIENT_ID: '', CLIENT_SECRET: '', ISSUER_URL: '', REDIRECT_BASE_URL: '' };
    try {
      await h.signInAs(h.stack.adminToken, /\/dashboard/);
      await h.withSettings({ oauth: blank }, async () => {
        await h.open('/settings', 'General settings');
        const group = h.page.locator('fieldset[data-group="oauth"]');
        await group.getByLabel('Issuer URL', { exact: true }).fill(provider.issuer);
        await group.getByLabel('Client id', { exact: true }).fill('pack-console');
        await group.getByLabel('Client secret (write-only)').fill(CLIENT_SECRET);
        await group.getByLabel('Redirect base (public URL of the platform)').fill(h.stack.gateway);
        await group
          .getByText(`Register ${h.stack.gateway}/v1/core/auth/oidc/callback/ as the redirect URI`)
          .waitFor();
        await group.getByLabel('Sign-in through the identity provider', { exact: true }).check();
        await h.page.getByRole('button', { name: 'Save settings' }).click();
        await h.page.getByText(/^Saved: Identity-provider OAuth/).waitFor();
        await expectAccessible(h, 'settings-oauth');

        await h.signOut();
        await h.page.getByRole('link', { name: 'Sign in through the identity provider' }).click();
        // The provider's own sign-in page, then back through the gateway into the console.
        await h.page.getByRole('link', { name: 'olivia' }).click();
        await h.page.getByRole('navigation', { name: 'Main' }).waitFor();
        await h.page.locator('.who').getByText('olivia').waitFor();
        expect(await h.page.locator('.who span').first().textContent()).toBe('olivia (admin)');
        expect(new URL(h.page.url())).toMatchObject({
          hash: '',
          pathname: expect.not.stringMatching(/sign-in/),
        });
        await h.open('/settings', 'General settings');
        await h.signOut();
      });
    } finally {
      await provider.stop();
    }
  });

  it("shows a Service's AI budget and the month's spend on the AI processors page, and lets the admin set it (a bad amount refused next to the field)", async () => {
    await h.signInAs(h.stack.adminToken, /\/dashboard/);
    const created = await h.stack.call('POST', '/v1/catalog/services/', {
      body: { name: 'Budgeted in the console' },
    });
    const budgetPath = `/v1/ai/services/${created.body.id}/budget/`;
    await h.open('/processors', 'AI processors');
    await h.page.getByLabel('Service', { exact: true }).selectOption(String(created.body.id));
    const panel = h.page.getByTestId('ai-budget');
    await panel.locator('[data-figure="limit"] dd').getByText('no limit').waitFor();
    expect(await panel.locator('[data-figure="spent"] dd').textContent()).toMatch(/^0\.000000 [A-Z]{3}$/);

    const limit = h.page.getByLabel(/^Monthly limit/);
    await limit.fill('12.3456789');
    await h.page.getByRole('button', { name: 'Save limit' }).click();
    await h.page
      .locator('.field-invalid')
      .getByLabel(/^Monthly limit/)
      .waitFor();
    expect((await h.stack.call('GET', budgetPath)).body.monthly_limit).toBeNull();

    await limit.fill('25.00');
    await h.page.getByRole('button', { name: 'Save limit' }).click();
    await panel
      .locator('[data-figure="limit"] dd')
      .getByText(/^25\.00 [A-Z]{3}$/)
      .waitFor();
    expect((await h.stack.call('GET', budgetPath)).body.monthly_limit).toBe('25.00');
    await expectAccessible(h, 'processors-budget');
    await h.screenshot('processors-budget');
    await h.stack.call('PUT', budgetPath, { body: { monthly_limit: null } });
  });
});
