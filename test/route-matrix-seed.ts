/** What the route matrix (test/e2e/route-matrix.test.ts) seeds before it calls every route. */
import { ROLES, type Role } from '@pack/contracts';
import { LeakScan, outboxDrained, seededSecret, waitFor } from '@pack/testkit';
import { modelKnownToOrchestrator, type Stack } from './stack';

/**
 * Random secret material (24 characters): no fragment of it is an ordinary word. Also seeded for
 * the suite-wide leak scan (testkit suite-scan.ts), which reads every answer, admins' too.
 */
const material = (label: string) => seededSecret(label, { length: 24 });

/**
 * Secrets seeded into every service that keeps one, each registered with `leaks` by its random
 * material only (a public prefix such as `whsec_` or `Bearer ` is no secret).
 */
export interface Seeded {
  tokens: Record<Role, string>;
  /** The seeded webhook's target: an ordinary receiver that answers "thanks". */
  webhookTarget: string;
}

/**
 * Id 1 of every kind exists: a token, a Service, its Service Item, declaration and change
 * instance, an LLM model, an AI processor, a webhook. Also a genai model (id 2) and the settings'
 * secrets, so that every kind of stored secret can be looked for in what the routes answer.
 */
export async function seedMatrix(stack: Stack, leaks: LeakScan, webhookTarget: string): Promise<Seeded> {
  const tokens = { admin: stack.adminToken } as Record<Role, string>;
  for (const role of ROLES.filter((r) => r !== 'admin')) {
    const issued = await stack.call('POST', '/v1/core/tokens/', {
      body: { username: `matrix_${role}`, role },
    });
    expect(issued.status).toBe(201);
    tokens[role] = issued.body.token;
  }
  const service = await stack.call('POST', '/v1/catalog/services/', {
    token: tokens.service_owner,
    body: { name: 'Matrix service' },
  });
  expect(service.body.id).toBe(1);
  const submitted = await stack.call('POST', '/v1/catalog/services/1/declarations/', {
    token: tokens.consumer,
    body: { declaration: { size: 'S' } },
  });
  expect(submitted.body.change_instance.id).toBe(1);

  const apiKey = material('the matrix LLM api_key');
  leaks.seed('the LLM api_key', apiKey);
  const model = await stack.call('POST', '/v1/ai/llm_models/', {
    body: {
      name: 'Matrix model',
      provider: 'vendor1',
      model_name: 'm',
      extra_data: { api_key: `sk-${apiKey}`, base_url: 'https://llm.example.com/v1' },
    },
  });
  expect(model.body.id).toBe(1);
  const credentials = material('the matrix genai credentials');
  leaks.seed('the genai credentials', credentials);
  const genai = await stack.call('POST', '/v1/ai/llm_models/', {
    body: {
      name: 'Matrix genai model',
      provider: 'genai',
      model_name: 'g',
      extra_data: {
        token_url: 'https://auth.example.com/token',
        request_url: 'https://llm.example.com/generate',
        credentials: `Basic ${credentials}`,
        verify_ssl: true,
        request_payload: { temperature: 0 },
      },
    },
  });
  expect(genai.status).toBe(201);
  await modelKnownToOrchestrator(stack, model.body.id);
  // The orchestrator learns the Service and the model from events; until then it answers 400.
  const processor = await waitFor(
    async () => {
      const created = await stack.call('POST', '/v1/ai/processors/', {
        token: tokens.service_owner,
        body: { name: 'Matrix processor', service: 1, kind: 'config', llm_model: 1, active: true },
      });
      return created.status === 201 && created;
    },
    { what: 'the orchestrator to know Service 1 and model 1' },
  );
  expect(processor.body.id).toBe(1);

  const authorization = material('the matrix webhook authorization');
  leaks.seed('the webhook authorization', authorization);
  const webhook = await waitFor(
    async () => {
      const created = await stack.call('POST', '/v1/external/serviceowner/webhooks/', {
        token: tokens.service_owner,
        body: {
          name: 'Matrix webhook',
          service: 1,
          target_url: webhookTarget,
          authorization: `Bearer ${authorization}`,
          change_instance_state: 'COMPLETED',
        },
      });
      return created.status === 201 && created;
    },
    { what: 'the dispatcher to know Service 1' },
  );
  expect(webhook.body.id).toBe(1);
  leaks.seed('the webhook signing secret', (webhook.body.secret as string).replace(/^whsec_/, ''));

  const settingsSecrets = {
    ldap: material('the matrix ldap BIND_PASSWORD'),
    smtp: material('the matrix smtp EMAIL_HOST_PASSWORD'),
    oauth: material('the matrix oauth CLIENT_SECRET'),
  };
  for (const [group, secret] of Object.entries(settingsSecrets)) leaks.seed(`the ${group} secret`, secret);
  const settings = await stack.call('PATCH', '/v1/core/general_settings/', {
    body: {
      ldap: { BIND_PASSWORD: settingsSecrets.ldap },
      smtp: { EMAIL_HOST_PASSWORD: settingsSecrets.smtp },
      oauth: { CLIENT_SECRET: settingsSecrets.oauth },
    },
  });
  expect(settings.status).toBe(200);

  for (const running of stack.services)
    if (running.definition.usesBroker !== false) await outboxDrained(running);
  return { tokens, webhookTarget };
}
