/**
 * The operator console with pipelines running, in Chromium: a valid gen_ui drawn as components
 * and an unsupported one shown as data, a stage changing on the page by itself, the dashboard's
 * figures against the API's, the Change Instances table refreshing by itself, and the
 * navigation of each role. Every page is scanned by axe-core and photographed.
 */
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { CEILINGS, seededSecret, startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import { modelKnownToOrchestrator } from '../stack';
import { expectAccessible, SCREENSHOTS, startConsole, type Harness } from './harness';

const KEY = seededSecret('the console pipelines api_key', {
  prefix: 'sk-console-pipelines-',
  suffix: '0000',
});
const PACK = '/v1/external/serviceowner/pack/';
/** An item's page heading once its pipeline is read: the item by its Service's name and number. */
const itemHeading = (item: number) => new RegExp(`^Pipeline of .+ · item ${item}$`);
const VALID_UI = {
  components: [
    { type: 'heading', props: { text: 'Namespace ready', level: 2 }, style: { color: 'success' } },
    { type: 'key_value', props: { items: [{ label: 'CPU', value: 8 }] } },
    { type: 'badge', props: { text: '<b>not markup</b>', tone: 'success' } },
  ],
};
const UNSUPPORTED_UI = { components: [{ type: 'chart', props: { series: [1, 2] } }] };

describe('the operator console: pipelines, dashboard, Change Instances, roles', () => {
  let h: Harness;
  let fake: FakeProviderServer;
  let actors: ReturnType<typeof pipelineActors>;
  let ownerToken: string;
  let consumerToken: string;
  let model: number;
  let service: number;
  /** An item whose pipeline ran in the set-up: what tells a test the orchestrator read new settings. */
  let probeItem: number;
  /** The general settings every test starts from. */
  let baseline: Record<string, unknown>;

  beforeAll(async () => {
    h = await startConsole();
    fake = await startFakeOpenAi({ apiKey: KEY });
    [ownerToken, consumerToken] = await Promise.all([
      h.stack.issueToken('service_owner'),
      h.stack.issueToken('consumer'),
    ]);
    actors = pipelineActors(h.stack, ownerToken, consumerToken);
    const created = await h.stack.call('POST', '/v1/ai/llm_models/', {
      body: {
        name: 'Pipeline model',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        input_price_per_1m_tokens: '0.15',
        output_price_per_1m_tokens: '0.6',
        extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      },
    });
    expect(created.status).toBe(201);
    model = created.body.id;
    await modelKnownToOrchestrator(h.stack, model);
    [service, probeItem] = await Promise.all([
      uiService('Console pipelines'),
      uiService('Console settings probe').then(async (probe) => {
        fake.scriptReplies(JSON.stringify(VALID_UI));
        const { item } = await actors.approved(probe, { namespace: 'probe' });
        await configDone(item);
        return item;
      }),
    ]);
    await h.showAiIntegration();
    baseline = (await h.stack.call('GET', '/v1/core/general_settings/')).body;
  });
  afterAll(async () => {
    await h?.close();
    await fake?.close();
  });
  afterEach(async () => {
    h.expectNoBrowserProblems();
    // Every test leaves the settings as it found them.
    expect((await h.stack.call('GET', '/v1/core/general_settings/')).body).toEqual(baseline);
  });

  /** A new Service of the owner with an active config processor that asks for a generative UI. */
  async function uiService(name: string): Promise<number> {
    const id = (await actors.asOwner('POST', '/v1/catalog/services/', { name })).body.id as number;
    const processor = {
      name: 'UI config',
      service: id,
      kind: 'config',
      llm_model: model,
      prompt: 'Plan it.',
      generative_ui: true,
      active: true,
    };
    await waitFor(
      async () => (await actors.asOwner('POST', '/v1/ai/processors/', processor)).status === 201,
      { what: `the config processor of ${name}` },
    );
    return id;
  }
  /** The item's latest pipeline once CONFIG is OK (each test's item is of a Service of its own). */
  function configDone(item: number) {
    return waitFor(
      async () => {
        const answer = await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`);
        return answer.body?.stages?.[0]?.state === 'OK' && answer.body;
      },
      { what: 'CONFIG OK' },
    );
  }
  /** Whether the orchestrator shows costs to owners (the charges settings it has read). */
  const costShownToOwner = async () =>
    (await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${probeItem}/`)).body.total_cost !==
    null;

  it("shows a Service's Pack Optimizer notes on the AI processors page, newest first, as text", async () => {
    const optimized = await actors.serviceWith('Console optimized', model, ['config', 'pack_optimizer']);
    const notes = `/v1/ai/services/${optimized}/optimizer_notes/`;
    fake.scriptReplies('{"vm":"n1"}', 'Run 1: <b>use two VMs</b>.');
    const { item } = await actors.approved(optimized, { namespace: 'notes' });
    await waitFor(async () => (await actors.asOwner('GET', notes)).body?.count === 1, {
      what: 'the first note',
    });
    fake.scriptReplies('{"vm":"n2"}', 'Run 2: two VMs worked.');
    expect((await actors.asOwner('POST', `${PACK}retrigger/service_item/${item}/`)).status).toBe(202);
    await waitFor(async () => (await actors.asOwner('GET', notes)).body?.count === 2, {
      what: 'the second note',
    });
    await h.signInAs(ownerToken, /\/(dashboard|models)/);
    await h.open('/processors', 'AI processors');
    await h.page.getByLabel('Service', { exact: true }).selectOption(String(optimized));
    const shown = h.page.getByTestId('optimizer-notes').locator('article.note');
    await shown.nth(1).waitFor();
    expect(await shown.locator('h3').allTextContents()).toEqual([
      `Service Item ${item}, run 2`,
      `Service Item ${item}, run 1`,
    ]);
    // The optimizer's output is text: the markup in it is shown, never parsed.
    expect(await shown.locator('pre').allTextContents()).toEqual([
      'Run 2: two VMs worked.',
      'Run 1: <b>use two VMs</b>.',
    ]);
    expect(await shown.locator('b').count()).toBe(0);
    expect(await shown.first().textContent()).toContain('Console optimized pack_optimizer');
    await expectAccessible(h, 'processors-optimizer-notes');
  });

  it('draws a valid gen_ui as components, and shows a stage that changes without a reload', async () => {
    fake.scriptReplies(JSON.stringify(VALID_UI));
    const { item } = await actors.approved(service, { namespace: 'team-a' });
    await configDone(item);
    await h.signInAs(ownerToken, /\/(dashboard|models)/);
    const clock = await h.pageClock();
    await h.open(`/pipelines/${item}`, itemHeading(item));
    const ui = h.page.locator('[data-stage="CONFIG"] [data-gen-ui="components"]');
    await ui.waitFor();
    expect(await ui.locator('h5.gu-heading.gu-color-success').textContent()).toBe('Namespace ready');
    expect(await ui.locator('dl.gu-key-value dt').textContent()).toBe('CPU');
    expect(await ui.locator('dl.gu-key-value dd').textContent()).toBe('8');
    // Model output is text: the markup in it is shown, never parsed.
    expect(await ui.locator('span.gu-badge').textContent()).toBe('<b>not markup</b>');
    expect(await ui.locator('b').count()).toBe(0);
    expect(await h.page.locator('[data-gen-ui="fallback"]').count()).toBe(0);
    await expectAccessible(h, 'pipeline');
    await h.screenshot('pipeline');

    await h.markPage();
    const pushed = await actors.asOwner('POST', `${PACK}data/service_item/${item}/verify/`, {
      checked: true,
    });
    expect(pushed.status).toBe(201);
    await waitFor(
      async () =>
        (await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`)).body?.stages?.[1]
          ?.state === 'OK',
      { what: 'VERIFY OK in the API' },
    );
    // The page's next refresh of a run that does not run (every 10 s), without waiting it out.
    await clock.fastForward(10_000);
    await h.page.locator('[data-stage="VERIFY"] .state-ok').waitFor({ timeout: CEILINGS.wait });
    await h.page.locator('[data-stage="VERIFY"]').getByText('pushed from outside').waitFor();
    expect(await h.pageStayed()).toBe(true);
  });

  it("lists each item's latest run with its three stage states, filters to the failed one, and names processor and model", async () => {
    const own = await actors.serviceWith('Console failing', model, ['config', 'verify']);
    // CONFIG answers, VERIFY is refused by the provider.
    fake.scriptReplies('{"vm":"c1"}');
    fake.next({}).next({ fault: { kind: 'status', status: 400, message: 'verify refused' } });
    const { item } = await actors.approved(own, { namespace: 'team-fail' });
    await waitFor(
      async () => {
        const answer = await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`);
        return answer.body?.stages?.[1]?.state === 'FAILED';
      },
      { what: 'VERIFY FAILED' },
    );
    await h.signInAs(ownerToken, /\/(dashboard|models)/);
    await h.open('/pipelines', 'Pipelines');
    const row = (id: number) => h.page.locator(`[data-testid="pipelines"] tr[data-item="${id}"]`);
    const states = (id: number) => row(id).locator('td[data-stage] .state').allTextContents();
    await row(item).waitFor();
    expect(await states(item)).toEqual(['OK', 'Failed', 'Not run']);
    expect(await row(item).locator('td').first().textContent()).toBe('Console failing');
    expect(await states(probeItem)).toEqual(['OK', 'Not run', 'Not run']);

    await h.page.getByLabel('Status').selectOption('failed');
    await row(probeItem).waitFor({ state: 'detached' });
    await row(item).waitFor();
    const shown = await h.page
      .locator('[data-testid="pipelines"] tbody tr')
      .evaluateAll((rows) => rows.map((tr) => tr.getAttribute('data-status')));
    expect(new Set(shown)).toEqual(new Set(['failed']));
    await expectAccessible(h, 'pipelines-failed');
    await h.screenshot('pipelines-failed');

    await row(item)
      .getByRole('link', { name: new RegExp(` · item ${item}$`) })
      .click();
    await h.page.getByRole('heading', { name: itemHeading(item) }).waitFor();
    const verify = h.page.locator('[data-stage="VERIFY"]');
    await verify.locator('.state-failed').waitFor();
    expect(await verify.locator('dt:text-is("Processor") + dd').textContent()).toMatch(
      /^Console failing verify #\d+$/,
    );
    expect(await verify.locator('dt:text-is("Model") + dd').textContent()).toBe('gpt-4o-mini');
    await h.screenshot('pipeline-failed');
  });

  it('pushes an error report into EXECUTION that restarts the pipeline only when asked ("may retrigger the workflow")', async () => {
    const own = await uiService('Console push');
    fake.scriptReplies(JSON.stringify(VALID_UI));
    const { item } = await actors.approved(own, { namespace: 'team-push' });
    const first = await configDone(item);
    await h.signInAs(ownerToken, /\/(dashboard|models)/);
    await h.open(`/pipelines/${item}`, itemHeading(item));
    await h.page.getByLabel('Stage to push PackData into').selectOption('execution');
    await h.page.getByLabel('PackData (JSON object)').fill('{"errors": ["smoke test failed"]}');
    await h.page.getByLabel(/An error report: restart the pipeline from CONFIG/).check();
    fake.scriptReplies(JSON.stringify(VALID_UI));
    await h.page.getByRole('button', { name: 'Push PackData' }).click();
    await h.page.getByText('PackData pushed into EXECUTION.').waitFor();
    const restarted = await waitFor(
      async () => {
        const answer = await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`);
        return answer.body?.id !== first.id && answer.body?.stages?.[0]?.state === 'OK' && answer.body;
      },
      { what: 'run 2 CONFIG OK' },
    );
    expect(restarted.run).toBe(first.run + 1);
    const pushedInto = await actors.asOwner('GET', `${PACK}pipelines/${first.id}/`);
    expect(pushedInto.body.stages[2]).toMatchObject({
      origin: 'pushed',
      pack_data: { errors: ['smoke test failed'] },
    });
  });

  it("shows the item's run history as the next CONFIG is given it: each run's PackData as written, the feedback, and what changed between two configurations", async () => {
    const own = await actors.serviceWith('Console history', model, ['config']);
    // Numbers as users write them: a double would show 3.1 and 1234567890123456800.
    fake.scriptReplies('{"disk":500,"vm":"c2","ratio":3.10,"serial":1234567890123456789}');
    const { item } = await actors.approved(own, { namespace: 'team-history' });
    const first = await configDone(item);
    fake.scriptReplies('{"disk":250,"vm":"c2","ratio":3.20,"serial":1234567890123456789}');
    const again = await actors.asOwner('POST', `${PACK}retrigger/service_item/${item}/`, {
      feedback: 'halve the disk',
    });
    expect(again.status).toBe(202);
    await waitFor(
      async () => {
        const answer = await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`);
        return answer.body?.id !== first.id && answer.body?.stages?.[0]?.state === 'OK';
      },
      { what: 'run 2 CONFIG OK' },
    );
    await h.signInAs(ownerToken, /\/(dashboard|models)/);
    await h.open(`/pipelines/${item}`, itemHeading(item));
    const history = h.page.locator('[data-testid="run-history"]');
    const run = (n: number) => history.locator(`li[data-run="${n}"]`);
    await run(2).waitFor();
    expect(await history.getByTestId('context-budget').textContent()).toMatch(
      /^What the next CONFIG is given: \d+ of 48000 characters, the budget of gpt-4o-mini \(128000 tokens; newest run first\)\.$/,
    );
    expect(await run(1).locator('[data-history-stage="CONFIG"] pre').textContent()).toBe(
      '{\n  "disk": 500,\n  "vm": "c2",\n  "ratio": 3.10,\n  "serial": 1234567890123456789\n}',
    );
    expect(await run(1).getByTestId('feedback').textContent()).toBe('Feedback: halve the disk');
    expect(await run(2).getByTestId('config-changes').locator('li').allTextContents()).toEqual([
      'disk: 500 → 250',
      'ratio: 3.10 → 3.20',
    ]);
    expect(await run(1).getByTestId('config-changes').count()).toBe(0);
    // The exact text the next CONFIG receives, as the API answers it.
    const context = await actors.asOwner('GET', `${PACK}pipelines/context/service_item/${item}/`);
    await history.getByText('The context exactly as the next CONFIG receives it').click();
    expect(await history.getByLabel('Execution context text').textContent()).toBe(context.body.text);
    await expectAccessible(h, 'pipeline-history');
    await h.screenshot('pipeline-history');
  });

  it('falls back to the standard renderer, visibly, for an unsupported gen_ui', async () => {
    // A looser catalog schema lets the unsupported component through the model's structured output.
    const looser = {
      type: 'object',
      properties: { components: { type: 'array', items: { type: 'object' } } },
      required: ['components'],
    };
    // One settings version also hides charges from owners, which shows when the orchestrator has it.
    const own = await uiService('Console pipelines fallback');
    expect(await costShownToOwner()).toBe(true);
    await h.withSettings(
      {
        ai_integration: { generative_ui_catalog_schema: looser },
        charges: { ENABLED: true, hide_for_serviceowners: true },
      },
      async () => {
        await waitFor(async () => !(await costShownToOwner()), {
          what: 'the orchestrator to read the new settings',
        });
        fake.scriptReplies(JSON.stringify(UNSUPPORTED_UI), JSON.stringify(UNSUPPORTED_UI));
        const { item } = await actors.approved(own, { namespace: 'team-b' });
        const pipeline = await configDone(item);
        expect(pipeline.stages[0].gen_ui_valid).toBe(false);
        await h.signInAs(ownerToken, /\/(dashboard|models)/);
        await h.open(`/pipelines/${item}`, itemHeading(item));
        const fallback = h.page.locator('[data-stage="CONFIG"] [data-gen-ui="fallback"]');
        await fallback.waitFor();
        expect(await fallback.getByRole('note').textContent()).toMatch(
          /^Shown as data: the UI reply was invalid/,
        );
        expect(JSON.parse((await fallback.locator('pre').textContent())!)).toEqual(UNSUPPORTED_UI);
        expect(await h.page.locator('[data-gen-ui="components"]').count()).toBe(0);
        await h.screenshot('pipeline-fallback');
      },
    );
    await waitFor(costShownToOwner, { what: 'the orchestrator to read the restored settings' });
    await h.open('/pipelines', 'Pipelines');
    await expectAccessible(h, 'pipelines');
    await h.screenshot('pipelines');
    await h.open('/processors', 'AI processors');
    await h.page.getByLabel('Service', { exact: true }).selectOption(String(own));
    await h.page.getByRole('button', { name: 'UI config' }).click();
    await h.page.getByLabel('Kind', { exact: true }).selectOption('change_instance_validator');
    expect(await h.page.getByLabel('Response JSON Schema').isDisabled()).toBe(true);
    await h.page.getByLabel('Kind', { exact: true }).selectOption('config');
    await h.page.getByLabel('Response JSON Schema').fill('{"type": "thing"}');
    await h.page.getByRole('button', { name: 'Save changes' }).click();
    await h.page.locator('.field-invalid').getByLabel('Response JSON Schema').waitFor();
    await expectAccessible(h, 'processors');
    await h.screenshot('processors');
  });

  it("shows the dashboard's figures equal to the API's for the same range", async () => {
    await h.signInAs(h.stack.adminToken, /\/dashboard/);
    // The set-up's pipeline called the model: its call is in the hourly rollups once the API counts it.
    await waitFor(async () => (await h.stack.call('GET', '/v1/ai/dashboard/')).body.totals.calls >= 1, {
      what: 'the calls counted',
    });
    await h.open('/dashboard', 'AI Integration');
    await h.page.getByTestId('dashboard-totals').waitFor();
    const from = await h.page.getByLabel('From (UTC day)').inputValue();
    const to = await h.page.getByLabel('To (UTC day, exclusive)').inputValue();
    const { body } = await h.stack.call('GET', `/v1/ai/dashboard/?from=${from}&to=${to}&group_by=model`);
    const { totals, currency } = body;
    const figure = async (key: string) =>
      (await h.page.locator(`[data-figure="${key}"] dd`).textContent())!.trim();
    const keys = ['calls', 'errors', 'input_tokens', 'output_tokens', 'cost', 'p50', 'p95'];
    expect(Object.fromEntries(await Promise.all(keys.map(async (key) => [key, await figure(key)])))).toEqual({
      calls: String(totals.calls),
      errors: `${totals.errors} (${(totals.error_rate * 100).toFixed(1)}%)`,
      input_tokens: String(totals.input_tokens),
      output_tokens: String(totals.output_tokens),
      cost: `${totals.cost} ${currency}`,
      p50: `${Math.round(totals.p50_latency_ms)} ms`,
      p95: `${Math.round(totals.p95_latency_ms)} ms`,
    });
    expect(totals.calls).toBeGreaterThanOrEqual(1);
    const row = h.page.getByTestId('dashboard-groups').locator('tbody tr').first();
    expect(await row.locator('th').textContent()).toMatch(/Pipeline model/);
    expect(await row.locator('td').first().textContent()).toBe(String(body.groups[0].calls));
    expect(await h.page.locator('canvas').count()).toBe(3);
    // A connection test of the model: a call of its own kind, with its cost and currency, apart.
    expect(
      (await h.stack.call('POST', `/v1/ai/llm_models/test_connection/${model}/`, { body: {} })).status,
    ).toBe(200);
    await h.page.reload();
    const tests = h.page.getByTestId('dashboard-connection-tests');
    await tests.waitFor();
    const after = (await h.stack.call('GET', `/v1/ai/dashboard/?from=${from}&to=${to}&group_by=model`)).body;
    const tested = after.connection_tests.groups.find((group: { key: number }) => group.key === model);
    const testRow = tests.locator('tbody tr', { hasText: 'Pipeline model' });
    expect(await testRow.locator('td').allTextContents()).toEqual([
      String(tested.calls),
      String(tested.errors),
      String(tested.input_tokens),
      String(tested.output_tokens),
      `${tested.cost} ${tested.currency}`,
    ]);
    expect(tested.currency).toBe(currency);
    await expectAccessible(h, 'dashboard');
    await h.screenshot('dashboard');
    copyFileSync(path.join(SCREENSHOTS, 'dashboard.png'), path.join(SCREENSHOTS, 'readme.png'));
  });

  it("shows the Change Instance Validator's missing decision and its reason in the Change Instances table", async () => {
    const validated = await actors.serviceWith('Console validated', model, ['change_instance_validator']);
    // Not a {decision, reasons} object, asked and re-asked: no decision.
    fake.scriptReplies('Maybe.', 'Still maybe.');
    const submitted = await h.stack.call('POST', `/v1/catalog/services/${validated}/declarations/`, {
      token: consumerToken,
      body: { declaration: { namespace: 'undecided' } },
    });
    expect(submitted.status).toBe(201);
    const id = submitted.body.change_instance.id;
    const validation = await waitFor(
      async () => (await actors.asOwner('GET', `/v1/catalog/change_instances/${id}/`)).body?.validation,
      { what: 'the validation recorded' },
    );
    const gui_table = { ENABLED: true, default_filter_states_for_serviceowners: ['PENDING'] };
    await h.withSettings({ gui_table }, async () => {
      await h.signInAs(ownerToken, /\/(dashboard|models)/);
      await h.open('/change-instances', 'Change Instances');
      const cell = h.page.locator(`[data-testid="change-instances"] tr[data-id="${id}"] td[data-validation]`);
      await cell.waitFor();
      expect(await cell.textContent()).toBe(`no decision: ${validation.reason}`);
    });
  });

  it('refreshes the Change Instances table by itself, with the default filter of the role', async () => {
    const gui_table = {
      ENABLED: true,
      table_refresh_interval: 5,
      default_filter_states_for_serviceowners: ['PENDING'],
    };
    await h.withSettings({ gui_table }, async () => {
      await h.signInAs(ownerToken, /\/(dashboard|models)/);
      const clock = await h.pageClock();
      await h.open('/change-instances', 'Change Instances');
      await h.page.getByTestId('refresh-status').getByText('Refreshes every 5 s.').waitFor();
      // The settings and the first page load side by side: the boxes show the role's default filter
      // once the page (whose answer names the filter applied) is there.
      await h.page.getByTestId('change-instances').waitFor();
      expect(await h.page.getByLabel('PENDING', { exact: true }).isChecked()).toBe(true);
      expect(await h.page.getByLabel('APPROVED', { exact: true }).isChecked()).toBe(false);
      await h.markPage();
      const submitted = await h.stack.call('POST', `/v1/catalog/services/${service}/declarations/`, {
        token: consumerToken,
        body: { declaration: { namespace: 'team-c' } },
      });
      expect(submitted.status).toBe(201);
      const id = submitted.body.change_instance.id;
      // The table's next refresh (every 5 s), without waiting it out.
      await clock.fastForward(5_000);
      await h.page
        .locator(`[data-testid="change-instances"] tr[data-id="${id}"]`)
        .waitFor({ timeout: CEILINGS.wait });
      expect(await h.pageStayed()).toBe(true);
      await expectAccessible(h, 'change-instances');
      await h.screenshot('change-instances');
      await h.page.setViewportSize({ width: 390, height: 844 });
      await expectAccessible(h, 'change-instances-phone');
      await h.screenshot('change-instances-phone');
      await h.page.setViewportSize({ width: 1280, height: 800 });
    });
  });

  it('offers each role its own navigation', async () => {
    const nav = () => h.page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
    await h.signInAs(ownerToken, /\/(dashboard|models)/);
    expect(await nav()).toEqual([
      'AI Integration',
      'LLM models',
      'AI processors',
      'Pipelines',
      'Change Instances',
      'Webhooks',
    ]);
    await h.signInAs(consumerToken, /\/change-instances/);
    expect(await nav()).toEqual(['Change Instances']);
    await h.page.goto(`${h.stack.gateway}/settings`);
    await h.page.getByText('This page is not available to your role.').waitFor();
    await expectAccessible(h, 'consumer');
  });

  it('shows the AI processors page, and each processor kind, only while the AI Integration setting for it is on', async () => {
    const nav = () => h.page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
    const kinds = () => h.page.getByLabel('Kind', { exact: true }).locator('option').allTextContents();
    const newProcessor = async () => {
      await h.open('/processors', 'AI processors');
      await h.page.getByLabel('Service', { exact: true }).selectOption(String(service));
      await h.page.getByRole('button', { name: 'New processor' }).click();
    };
    await h.signInAs(ownerToken, /\/(dashboard|models)/);
    await h.withSettings({ ai_integration: { show_ai_validator: false } }, async () => {
      await newProcessor();
      expect(await kinds()).toEqual([
        'CONFIG stage',
        'VERIFY stage',
        'EXECUTION stage',
        'Pack Optimizer',
        'Universal Executor',
      ]);
    });
    await h.withSettings({ ai_integration: { show_ai_processor: false } }, async () => {
      await newProcessor();
      expect(await kinds()).toEqual(['Change Instance Validator']);
      // An existing processor of a kind turned off keeps its kind, so it can still be saved.
      await h.page.getByRole('button', { name: 'UI config' }).click();
      await h.page.getByRole('heading', { name: 'Processor UI config' }).waitFor();
      expect(await kinds()).toEqual(['CONFIG stage', 'Change Instance Validator']);
    });
    await h.withSettings(
      { ai_integration: { show_ai_processor: false, show_ai_validator: false } },
      async () => {
        await h.open('/change-instances', 'Change Instances');
        expect(await nav()).toEqual(['LLM models', 'Pipelines', 'Change Instances', 'Webhooks']);
        await h.page.goto(`${h.stack.gateway}/processors`);
        await h.page.getByText('This page is turned off in the general settings (AI Integration).').waitFor();
      },
    );
  });

  it('Currency ENABLED off: the dashboard and a pipeline show the same costs with no currency named', async () => {
    await h.signInAs(h.stack.adminToken, /\/dashboard/);
    await h.withSettings({ currency: { ENABLED: false } }, async () => {
      const pipeline = await waitFor(
        async () => {
          const answer = await h.stack.call('GET', `${PACK}pipelines/latest/service_item/${probeItem}/`);
          return answer.body.currency === null && answer.body;
        },
        { what: 'the orchestrator to apply the Currency setting' },
      );
      const dashboard = await waitFor(
        async () => {
          const answer = await h.stack.call('GET', '/v1/ai/dashboard/?group_by=model');
          return answer.body.currency === null && answer.body;
        },
        { what: 'the llm gateway to apply the Currency setting' },
      );
      expect(pipeline.total_cost).toMatch(/^0\.0000\d+$/);
      await h.open(`/pipelines/${probeItem}`, itemHeading(probeItem));
      const summary = (await h.page.locator('p[aria-live="polite"]').first().textContent())!;
      expect(summary).toContain(`total cost ${pipeline.total_cost}`);
      expect(summary).not.toMatch(/USD|EUR|GBP/);
      await h.open('/dashboard', 'AI Integration');
      await h.page.getByTestId('dashboard-totals').waitFor();
      expect(await h.page.locator('[data-figure="cost"] dd').textContent()).toBe(dashboard.totals.cost);
      await h.page.getByText('costs in no named currency (the Currency setting is off)').waitFor();
      expect(await h.page.getByTestId('dashboard-groups').locator('thead').textContent()).not.toMatch(
        /USD|EUR|GBP/,
      );
    });
  });
});
