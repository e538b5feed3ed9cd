/**
 * `pnpm demo` as a newcomer runs it: its own process against a running stack, through the
 * gateway only, with its own fake provider and webhook receiver on loopback.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CEILINGS, spawnEntryPoint } from '@pack/testkit';
import { startStack, type Stack } from '../stack';
import { writeLocalStack } from '../../scripts/lib/local-stack';
import { zipkinStandIn } from './trace-viewer/viewer';

const DEMO = 'scripts/demo/main.ts';

/** The demo against `stack`, configured as `pnpm start` would configure it (gateway URL, admin token). */
const runDemo = (stack: Stack, env: Record<string, string | undefined>) =>
  spawnEntryPoint(DEMO, [], {
    PACK_GATEWAY_URL: stack.gateway,
    PACK_ADMIN_TOKEN: stack.adminToken,
    PACK_METRICS_URLS: stack.services.map((s) => `${s.definition.name}=${s.metricsUrl}`).join(','),
    PACK_DEMO_TIMEOUT_SECONDS: String(Math.ceil(CEILINGS.wait / 1000)),
    ...env,
  });

describe('pnpm demo', () => {
  let stack: Stack;
  /** What the demo reads of the local trace viewer (Zipkin's API and UI page). */
  let traces: Awaited<ReturnType<typeof zipkinStandIn>>;

  beforeAll(async () => {
    [traces, stack] = await Promise.all([zipkinStandIn(), startStack()]);
  });
  afterAll(async () => {
    await Promise.all([stack?.stop(), traces?.close()]);
  });

  const demo = (env: Record<string, string | undefined> = {}) =>
    runDemo(stack, { PACK_TRACE_VIEWER_URL: traces.base, ...env });

  it('runs a declaration through CONFIG, VERIFY and EXECUTION and shows the webhook delivery, then a configuration healed in run 2 from a simulation error', async () => {
    const result = await demo();
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    const out = result.stdout;

    // Each stage with its cost (12 input and 7 output tokens at 0.15 / 0.6 per 1M) and PackData, in order.
    const config = out.search(/CONFIG +OK +cost 0\.000006 USD\n.*PackData \{"vm":\{"flavor":"c2\.large"/);
    const verify = out.search(/VERIFY +OK +cost 0\.000006 USD\n.*PackData \{"checked":true/);
    const execution = out.search(/EXECUTION +OK +cost 0\.000006 USD\n.*PackData \{"delivered":true/);
    expect([config, verify, execution].every((at) => at >= 0)).toBe(true);
    expect(config < verify && verify < execution).toBe(true);
    expect(out).toMatch(/done: CONFIG, VERIFY and EXECUTION OK, total cost 0\.000018 USD/);

    expect(out).toMatch(
      /webhook delivery received: POST \/hooks\/pack-demo, webhook-id \S+, signature valid, authorization Bearer demo-receiver-token/,
    );
    expect(out).toMatch(
      /body \{"id":\d+,"name":"Demo VM \w+","owner":\{"id":\d+,"name":"demo-service-owner-\w+"\},"state":"APPROVED"\}/,
    );
    expect(out).toMatch(/webhook response #1 recorded: OK, HTTP 200, 1 attempt\(s\)/);
    expect(out).toMatch(
      /pipeline_stage_transitions_total\{stage="EXECUTION",state="OK",service="pipeline-orchestrator"\} [1-9]/,
    );
    expect(out).toMatch(/webhook_deliveries_total\{outcome="ok",service="webhook-dispatcher"\} [1-9]/);
    expect(out).toContain('demo OK');

    // The healing scene: run 1's configuration fails the outside simulation; run 2's CONFIG, given
    // that configuration and the error, corrects it; the Change Instance completes, its webhook fires.
    expect(out).toMatch(/run 1 CONFIG OK +\{"server":"web-1","disk_gb":500\}/);
    expect(out).toContain(
      'simulation: disk quota exceeded, 500 GB asked, 250 GB allowed: pushed into EXECUTION with retrigger=true, run 2 started',
    );
    expect(out).toMatch(/execution context: \d+ of 48000 characters \(the model's budget\); run 1 in it:/);
    expect(out).toContain('CONFIG OK, generated: {"server":"web-1","disk_gb":500}');
    expect(out).toMatch(/EXECUTION OK, pushed: \{"errors":\["simulation: disk quota exceeded/);
    expect(out).toMatch(/run 2 CONFIG OK +\{"server":"web-1","disk_gb":250\}/);
    expect(out).toContain('changed from run 1: disk_gb 500 -> 250');
    expect(out).toMatch(
      /Change Instance #\d+ COMPLETED after 2 runs; webhook delivery signature valid, body \{"id":\d+,"name":"Demo healing \w+",.*"state":"COMPLETED"\}/,
    );

    // The declaration went with a traceparent the demo made; its trace id, and where the viewer shows it.
    const traceId = /trace ([0-9a-f]{32}) \(the traceparent sent with the declaration/.exec(out)?.[1];
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(out).toContain(`  the trace               ${traces.base}/zipkin/traces/${traceId}\n`);
    // The demo asked the viewer about its own trace; the address it printed opens the viewer's page.
    expect(traces.asked).toContain(`/api/v2/trace/${traceId}`);
    expect((await fetch(`${traces.base}/zipkin/traces/${traceId}`)).status).toBe(200);

    // What the demo printed is what the API holds.
    const pipelineId = /GET \S+\/v1\/external\/serviceowner\/pack\/pipelines\/(\d+)\//.exec(out)?.[1];
    const pipeline = await stack.call('GET', `/v1/external/serviceowner/pack/pipelines/${pipelineId}/`);
    expect(pipeline.status).toBe(200);
    expect(pipeline.body).toMatchObject({
      total_cost: '0.000018',
      stages: [
        { stage: 'CONFIG', state: 'OK', pack_data: { vm: { flavor: 'c2.large' } } },
        { stage: 'VERIFY', state: 'OK' },
        { stage: 'EXECUTION', state: 'OK', pack_data: { delivered: true } },
      ],
    });
  });

  it('finds the stack `pnpm start` started: the gateway on the port it chose and the token it wrote', async () => {
    // What `pnpm start` writes for a gateway moved off 8080 (GATEWAY_PORT), this process standing in for it.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pack-demo-stack-'));
    const file = path.join(dir, 'stack.json');
    writeLocalStack(file, { gateway: stack.gateway, adminToken: stack.adminToken, pid: process.pid });
    try {
      const result = await demo({
        PACK_STACK_FILE: file,
        PACK_GATEWAY_URL: undefined,
        PACK_ADMIN_TOKEN: undefined,
      });
      expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
      expect(result.stdout).toContain(`pack demo against ${stack.gateway} `);
      expect(result.stdout).toContain('demo OK');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends with exit 1 and says why when the admin token is refused, the gateway is not there or the timeout is not a number', async () => {
    const refused = await demo({ PACK_ADMIN_TOKEN: 'pack_not-a-token' });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(
      `demo FAILED: the gateway at ${stack.gateway} refused the admin token (401)`,
    );

    const unbounded = await demo({ PACK_DEMO_TIMEOUT_SECONDS: 'forever' });
    expect(unbounded.status).toBe(1);
    expect(unbounded.stderr).toContain(
      'demo FAILED: PACK_DEMO_TIMEOUT_SECONDS must be whole seconds, 1 to 3600',
    );

    const closed = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const away = await demo({
      PACK_GATEWAY_URL: `http://127.0.0.1:${closed}`,
      PACK_DEMO_TIMEOUT_SECONDS: '2',
    });
    expect(away.status).toBe(1);
    expect(away.stderr).toContain(`demo FAILED: cannot reach the gateway at http://127.0.0.1:${closed}`);
    expect(away.stderr).toContain('is `pnpm start` running?');
  });
});

describe('pnpm demo against a stack that refuses loopback targets (PACK_ALLOWED_TARGET_CIDRS empty)', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ allowedTargetCidrs: '' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('stops at the webhook (model URLs may reach loopback) and says how to allow its receiver', async () => {
    const result = await runDemo(stack, {});
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      'demo FAILED: the stack refuses loopback targets: start it with PACK_ALLOWED_TARGET_CIDRS=127.0.0.0/8,::1/128',
    );
    expect(result.stdout).toContain('test_connection: ok');
    expect(result.stdout).not.toContain('webhook #');
  });
});
