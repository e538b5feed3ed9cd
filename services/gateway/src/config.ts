import { z } from 'zod';
import { loadConfig, serviceEnvSchema, type Env } from '@pack/config';
import { CONSOLE_DIST_DIR } from '@pack/console';
import { parseRoleGroups } from './domain/role-rules';

const url = (port: number) => z.url({ protocol: /^https?$/ }).default(`http://127.0.0.1:${port}`);

export const gatewayEnvSchema = serviceEnvSchema({ port: 8080, database: 'pack_gateway' }).extend({
  /** Overrides PORT for the gateway only (DESIGN section 12). */
  GATEWAY_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Token of the first admin user, created at start if absent. */
  PACK_ADMIN_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  /** That first admin's user name. */
  PACK_ADMIN_USERNAME: z.string().min(1).default('admin'),
  /** Where the catalog answers: the gateway forwards `/v1/catalog/` there. */
  CATALOG_URL: url(8081),
  /** Where the settings service answers (general settings; sign-in and mail read them). */
  SETTINGS_URL: url(8082),
  /** Where the llm-gateway answers (`/v1/ai/llm_models/`, the dashboard). */
  LLM_GATEWAY_URL: url(8083),
  /** Where the pipeline-orchestrator answers (processors, pipelines, budgets). */
  PIPELINE_ORCHESTRATOR_URL: url(8084),
  /** Where the webhook-dispatcher answers (webhooks and their responses). */
  WEBHOOK_DISPATCHER_URL: url(8085),
  /** A service slower than this to answer a forwarded request gets the caller a 504. */
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** How often revocations are picked up from the database by every replica. */
  REVOCATION_POLL_MS: z.coerce.number().int().min(50).max(10_000).default(500),
  /** Lifetime of the token a sign-in answers (LDAP or identity provider). */
  SIGNIN_TOKEN_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 86_400)
    .default(8 * 3600),
  /** Failed sign-ins one address may make per window before it must wait (per replica). */
  SIGNIN_MAX_FAILURES: z.coerce.number().int().min(1).max(10_000).default(5),
  /** The window those failed sign-ins are counted in. */
  SIGNIN_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /**
   * Proxies in front of the gateway that append to X-Forwarded-For (an ingress: 1). The sign-in
   * rate limit counts per client address, which is then read from that header; 0 uses the peer.
   */
  TRUSTED_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  /** `<group>=<role>` pairs: directory or identity-provider groups that grant a role. */
  SIGNIN_ROLE_GROUPS: z
    .string()
    .default('admin=admin,service_owner=service_owner,consumer=consumer')
    .transform((text, ctx) => {
      const parsed = parseRoleGroups(text);
      if (typeof parsed === 'string') {
        ctx.addIssue({ code: 'custom', message: parsed });
        return z.NEVER;
      }
      return parsed;
    }),
  /** The role of an account in none of those groups; `none` refuses its sign-in. */
  SIGNIN_DEFAULT_ROLE: z.enum(['consumer', 'service_owner', 'none']).default('consumer'),
  /** The LDAP attribute that holds the user name (`sAMAccountName` on Active Directory). */
  LDAP_USER_ATTRIBUTE: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9-]*$/, 'must be an attribute name')
    .default('uid'),
  /** The OpenID provider's issuer URL when ISSUER_URL of the general settings (Identity-provider OAuth) is empty. */
  OIDC_ISSUER_URL: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * The gateway's public base URL, for the OpenID redirect URI, when REDIRECT_BASE_URL of the
   * general settings is empty; unset too: taken from each request.
   */
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** How long the identity provider's discovered configuration is used before it is read again. */
  OIDC_DISCOVERY_CACHE_MS: z.coerce.number().int().min(0).max(86_400_000).default(300_000),
  /** The sender of notification and test mails. */
  MAIL_FROM: z.string().min(3).default('noreply@pack-platform.invalid'),
  /** How long the LDAP server, the identity provider or the SMTP server may take per step. */
  INTEGRATION_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** The operator console's build, served at `/`; default packages/console/dist. */
  CONSOLE_DIST_DIR: z.string().min(1).default(CONSOLE_DIST_DIR),
});

export type GatewayConfig = z.infer<typeof gatewayEnvSchema>;

export function gatewayConfig(env: Env = process.env): GatewayConfig {
  const config = loadConfig(gatewayEnvSchema, env);
  return { ...config, PORT: config.GATEWAY_PORT ?? config.PORT };
}
