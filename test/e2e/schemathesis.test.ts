import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  startFakeAnthropic,
  startFakeAssistants,
  startFakeGemini,
  startFakeGenai,
  startFakeOpenAi,
  timeScale,
  waitFor,
  type FakeProviderServer,
} from '@pack/testkit';
import { SETTINGS_DERIVED_FIELDS, type SettingsGroup } from '@pack/contracts';
import { modelKnownToOrchestrator, startStack, type Stack } from '../stack';
import { loopbackOnly } from './loopback-only';
import { exercisedOperations } from './schemathesis/exercised';

/**
 * The public API fuzzed by schemathesis (PyPI, pinned below, installed by the shared install
 * script) from /v1/openapi.json with every check it has: no server error, every answer documented
 * (status, media type, headers, body schema), every schema-valid request accepted and every
 * schema-invalid one refused, 405 with Allow for an undeclared method, no ignored auth. A client
 * generated from the document therefore sends only requests the server takes.
 *
 * The rules JSON Schema cannot state (a URL that parses and that the address guard allows, ids
 * of things that exist, the dashboard's longest range) are in the document's descriptions and
 * taught to the fuzzer by schemathesis/pack_fuzz_hooks.py, for positive cases only.
 */
const SCHEMATHESIS_VERSION = '4.32.5';
const FUZZ_KEY = 'fuzz-key-0000';
/**
 * Cases per operation in the fuzzing phase. The coverage phase, which tries each schema's
 * boundaries and violations, is not bounded by it: the hooks' filter_case tries each of its rules
 * once per operation (schemathesis/pack_fuzz_hooks.py), most of the run's ~3,500 cases.
 */
const MAX_EXAMPLES = '6';
/** Fixed, so a CI run is repeatable; change it locally to explore other inputs. */
const SEED = '19';
const HOOKS_DIR = path.join(__dirname, 'schemathesis');
/**
 * Run last, with a throwaway admin token: the deletions (which would take the seeded resources
 * from the other operations) and sign-out (which revokes the token it is sent with).
 */
const LAST_OPERATIONS = '^(delete[A-Za-z]+|postCoreAuthLogout)$';
/**
 * A run's time limit in this test, a ceiling only a hang reaches (scaled by PACK_TEST_TIME_SCALE):
 * 6,998 cases of 62 operations took 295 s on two quiet cores (2026-12-02), before each coverage
 * rule was tried once, and a run of 3,640 cases 875 s on two cores shared by five suites.
 */
const RUN_TIMEOUT_MS = Math.round(1_800_000 * timeScale());

interface Run {
  code: number | null;
  output: string;
  seconds: number;
}

const workDir = mkdtempSync(path.join(tmpdir(), 'pack-schemathesis-'));
/** Each run's NDJSON report (every case, its request and answer), read for the operations it reached. */
const reports: string[] = [];

function schemathesis(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn('schemathesis', args, {
      // Its caches (.schemathesis, .hypothesis) go there, not into the checkout.
      cwd: workDir,
      env: {
        ...process.env,
        NO_COLOR: '1',
        PYTHONPATH: HOOKS_DIR,
        SCHEMATHESIS_HOOKS: 'pack_fuzz_hooks',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, output, seconds: Number(process.hrtime.bigint() - started) / 1e9 }),
    );
  });
}

/** The summary schemathesis ends with: phases, failures, warnings, test cases. */
const summaryOf = (output: string) =>
  output.slice(output.lastIndexOf('\n', output.lastIndexOf('= SUMMARY =')) + 1);
const casesOf = (output: string) => Number(/(\d+) generated/.exec(output)?.[1] ?? 0);

describe('the OpenAPI document, fuzzed by schemathesis with --checks all', () => {
  let stack: Stack;
  let sink: Server;
  let fakes: FakeProviderServer[];
  let restoreNetwork: () => void;
  let env: Record<string, string>;

  beforeAll(async () => {
    const installed = await schemathesis(['--version']).catch((error: Error) => ({
      code: -1,
      output: error.message,
      seconds: 0,
    }));
    if (!installed.output.includes(`version ${SCHEMATHESIS_VERSION}`))
      throw new Error(
        `schemathesis ${SCHEMATHESIS_VERSION} is needed (found: ${installed.output.trim()}); run: pip install schemathesis==${SCHEMATHESIS_VERSION}`,
      );
    restoreNetwork = loopbackOnly();
    // Every URL the fuzzer sends as valid points here: webhook deliveries and provider tests
    // reach a real loopback server, never another address.
    sink = createServer((req, res) => {
      req.resume();
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    // A fake provider per wire format, so a connection test the fuzzer asks for gets an answer.
    const [openAi, anthropic, gemini, assistants, genai] = await Promise.all([
      startFakeOpenAi({ apiKey: FUZZ_KEY }),
      startFakeAnthropic({ apiKey: FUZZ_KEY }),
      startFakeGemini({ apiKey: FUZZ_KEY }),
      startFakeAssistants({ apiKey: FUZZ_KEY, assistantId: 'asst_fuzz' }),
      // Its token server takes either encoding: bodies may set token_request_format.
      startFakeGenai({ credentials: FUZZ_KEY, tokenFormat: 'any' }),
    ]);
    fakes = [openAi, anthropic, gemini, assistants, genai];
    // The assistant's run ends at the client's first poll (250 ms), not its third (1.75 s): the
    // ~100 successful connection tests on it were 190 of the run's 480 s, and the polling itself
    // is the llm-providers tests' subject, not the document's.
    assistants.script.pollsBeforeEnd = 0;
    const extraData = {
      vendor1: { api_key: FUZZ_KEY, base_url: `${openAi.url}/v1` },
      vendor2: { api_key: FUZZ_KEY, base_url: anthropic.url },
      vendor3: { api_key: FUZZ_KEY, base_url: gemini.url },
      vendor1_assistant: {
        VENDOR1_API_KEY: FUZZ_KEY,
        VENDOR1_ASSISTANT_ID: 'asst_fuzz',
        base_url: `${assistants.url}/v1`,
      },
      genai: {
        token_url: genai.tokenUrl,
        request_url: genai.requestUrl,
        credentials: FUZZ_KEY,
        verify_ssl: false,
        request_payload: {},
      },
    };
    stack = await startStack();
    const consumerToken = await stack.issueToken('consumer');
    // Id 1 of every kind exists, so generated ids reach real resources.
    // The admin owns it: the fuzzer calls as the admin, and a processor or webhook needs an owned Service.
    const service = await stack.call('POST', '/v1/catalog/services/', { body: { name: 'Fuzzed service' } });
    expect(service.status).toBe(201);
    const submitted = await stack.call('POST', `/v1/catalog/services/${service.body.id}/declarations/`, {
      token: consumerToken,
      body: { declaration: { size: 'S' } },
    });
    expect(submitted.status).toBe(201);
    const target = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/`;
    const model = await stack.call('POST', '/v1/ai/llm_models/', {
      body: {
        name: 'Fuzzed model',
        provider: 'vendor1',
        model_name: 'm',
        extra_data: extraData.vendor1,
      },
    });
    expect(model.status).toBe(201);
    // A model of every other provider: a PATCH or connection test goes to the one of its body's provider.
    const models: Record<string, number> = { vendor1: model.body.id };
    for (const provider of ['vendor1_assistant', 'vendor2', 'vendor3', 'genai'] as const) {
      const other = await stack.call('POST', '/v1/ai/llm_models/', {
        body: { name: `Fuzzed ${provider}`, provider, model_name: 'm', extra_data: extraData[provider] },
      });
      expect(other.status).toBe(201);
      models[provider] = other.body.id;
    }
    await modelKnownToOrchestrator(stack, model.body.id);
    await waitFor(
      async () =>
        (
          await stack.call('POST', '/v1/ai/processors/', {
            body: {
              name: 'Fuzzed processor',
              service: service.body.id,
              kind: 'config',
              llm_model: model.body.id,
              active: true,
            },
          })
        ).status === 201,
      { what: 'the orchestrator to know the Service and the model' },
    );
    const webhook = await stack.call('POST', '/v1/external/serviceowner/webhooks/', {
      body: { name: 'Fuzzed webhook', service: service.body.id, target_url: target },
    });
    expect(webhook.status).toBe(201);
    env = {
      PACK_FUZZ_TARGET_URL: target,
      PACK_FUZZ_IDS: JSON.stringify({ service: service.body.id, llm_model: model.body.id }),
      PACK_FUZZ_EXTRA_DATA: JSON.stringify(extraData),
      PACK_FUZZ_MODELS: JSON.stringify(models),
    };
  });

  afterAll(async () => {
    await stack?.stop();
    await new Promise((resolve) => sink?.close(resolve));
    await Promise.all((fakes ?? []).map((fake) => fake.close()));
    restoreNetwork?.();
    rmSync(workDir, { recursive: true, force: true });
  });

  const run = async (token: string, filter: string[]) => {
    const report = path.join(workDir, `run-${reports.length + 1}.ndjson`);
    reports.push(report);
    const result = await schemathesis(
      [
        '--config-file',
        path.join(HOOKS_DIR, 'schemathesis.toml'),
        'run',
        `${stack.gateway}/v1/openapi.json`,
        '--checks',
        'all',
        '--header',
        `Authorization: Token ${token}`,
        '--max-examples',
        MAX_EXAMPLES,
        '--seed',
        SEED,
        // One worker: with two, hypothesis parses sources in both threads and Python 3.11 can fail
        // with "AST constructor recursion depth mismatch" (a Python bug, no finding of the API).
        '--workers',
        '1',
        // Hypothesis gives up on an operation whose data it draws slowly, judged by the clock: on a
        // loaded machine the processors' (free JSON response_schema) failed so. No case is dropped.
        '--suppress-health-check',
        'too_slow',
        '--report',
        'ndjson',
        '--report-ndjson-path',
        report,
        ...filter,
      ],
      env,
    );
    process.stdout.write(
      `schemathesis ${filter.join(' ')}: ${casesOf(result.output)} cases in ${result.seconds.toFixed(1)} s\n${summaryOf(result.output)}\n`,
    );
    return result;
  };

  it(
    'finds no failure in any operation but the deletions and sign-out, run with the admin token; settings restored after',
    async () => {
      const settings = await stack.call('GET', '/v1/core/general_settings/');
      expect(settings.status).toBe(200);
      const result = await run(stack.adminToken, ['--exclude-operation-id-regex', LAST_OPERATIONS]);
      // Put back what the run changed: every writable field as it was (derived ones cannot be
      // sent; a masked secret sent back keeps the stored one).
      const writable = Object.fromEntries(
        Object.entries(settings.body as Record<string, Record<string, unknown>>).map(([group, fields]) => [
          group,
          Object.fromEntries(
            Object.entries(fields).filter(
              ([field]) => !(SETTINGS_DERIVED_FIELDS[group as SettingsGroup] ?? []).includes(field),
            ),
          ),
        ]),
      );
      const restored = await stack.call('PATCH', '/v1/core/general_settings/', { body: writable });

      expect({ code: result.code, failures: result.code === 0 ? '' : result.output }).toEqual({
        code: 0,
        failures: '',
      });
      expect({ status: restored.status, body: restored.status === 200 ? null : restored.body }).toEqual({
        status: 200,
        body: null,
      });
      expect((await stack.call('GET', '/v1/core/general_settings/')).body).toEqual(settings.body);
      expect(result.output).toMatch(/Tested: 6\d\b/);
      expect(casesOf(result.output)).toBeGreaterThan(1000);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'finds no failure in the deletions and sign-out, run after the others with a throwaway admin token',
    async () => {
      const throwaway = await stack.issueToken('admin');
      const result = await run(throwaway, ['--include-operation-id-regex', LAST_OPERATIONS]);
      expect({ code: result.code, failures: result.code === 0 ? '' : result.output }).toEqual({
        code: 0,
        failures: '',
      });
      expect(result.output).toMatch(/Tested: 6\b/);
      // Sign-out was really exercised: the throwaway token no longer works.
      expect((await stack.call('GET', '/v1/core/me/', { token: throwaway })).status).toBe(401);
    },
    RUN_TIMEOUT_MS,
  );

  it('sent requests to every operation of the document and had them answered, in the coverage and the fuzzing phase', async () => {
    // After the two runs above (jest runs a file's tests in order): between them, every operation.
    expect(reports).toHaveLength(2);
    // Schemathesis reads the document from GET /v1/openapi.json and leaves that operation out.
    const operations = (await stack.openApi())
      .operations()
      .filter((operation) => operation !== 'GET /v1/openapi.json')
      .sort();
    const reached = new Map<string, Set<string>>();
    for (const report of reports)
      for (const [phase, labels] of exercisedOperations(report))
        reached.set(phase, new Set([...(reached.get(phase) ?? []), ...labels]));
    const missed = (phase: string) => operations.filter((operation) => !reached.get(phase)?.has(operation));
    process.stdout.write(
      `schemathesis answered: ${['coverage', 'fuzzing'].map((phase) => `${operations.length - missed(phase).length} of ${operations.length} operations in the ${phase} phase`).join(', ')}\n`,
    );
    expect({ coverage: missed('coverage'), fuzzing: missed('fuzzing') }).toEqual({
      coverage: [],
      fuzzing: [],
    });
    expect(operations.length).toBeGreaterThanOrEqual(70);
  });
});
