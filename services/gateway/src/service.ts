import type { GeneralSettings } from '@pack/contracts';
import type { AnyRoute } from '@pack/http-kit';
import { connectMongo, ID_CLAIMS, mapDatabaseError, oncePerEvent } from '@pack/db';
import type { Logger } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { createTargetDispatcher, identityProviderPolicy } from '@pack/net-guard';
import type { ServiceDefinition } from '@pack/runtime';
import { GENERAL_SETTINGS_PLAINTEXT_PATH, SettingsCache } from '@pack/settings-client';
import { ServiceUnavailableError } from '@pack/errors';
import { MemoryFailureLimiter } from './data/failure-limiter';
import { MongoMinuteCounter } from './data/minute-counter';
import { LdapDirectory } from './data/ldap-directory';
import { gatewayModels } from './data/models';
import { OidcIdentityProvider } from './data/oidc-identity-provider';
import { TokenRepository } from './data/token-repository';
import { Authenticator } from './domain/authenticator';
import { HealthLimits } from './domain/health-limits';
import { Notifier } from './domain/mail';
import { SignIn } from './domain/sign-in';
import { tokenFromHeader } from './domain/token';
import { ApiDocument } from './http/api-document';
import { authRoutes } from './http/auth-routes';
import { serveConsole } from './http/console-front';
import { docsRoutes } from './http/docs-routes';
import { limitHealth } from './http/health-front';
import { createProxy } from './http/proxy';
import { mailRoutes } from './http/mail-routes';
import { tokenRoutes } from './http/token-routes';
import { userRoutes } from './http/user-routes';
import { mailConsumer } from './messaging/mail-consumer';
import { SmtpMailer } from './messaging/smtp-mailer';
import type { GatewayConfig } from './config';

export { gatewayConfig, gatewayEnvSchema, type GatewayConfig } from './config';
export { ROUTING_TABLE } from './domain/routing';

const VERSION = '0.1.0';

/**
 * The administrative commands' wiring (cli.ts): the token use cases on the gateway's own
 * database, connected for `run` and closed after it.
 */
export async function withTokenAdmin<T>(
  config: GatewayConfig,
  logger: Logger,
  run: (authenticator: Authenticator) => Promise<T>,
): Promise<T> {
  const mongo = connectMongo({
    url: config.MONGO_URL,
    dbName: config.MONGO_DB,
    logger,
    metrics: createMetrics('gateway-cli'),
  });
  try {
    await mongo.connected;
    const repository = new TokenRepository(mongo.connection, gatewayModels(mongo.connection));
    return await run(new Authenticator(repository, logger, 1000));
  } finally {
    await mongo.close();
  }
}

export const gatewayService: ServiceDefinition<GatewayConfig> = {
  name: 'gateway',
  version: VERSION,
  public: true,
  setup({ config, mongo, logger, metrics }) {
    const repository = new TokenRepository(mongo.connection, gatewayModels(mongo.connection));
    const authenticator = new Authenticator(repository, logger, config.REVOCATION_POLL_MS);
    // Sign-in and mail need secrets in plaintext: the settings service answers them to services only.
    const settingsCache = new SettingsCache({
      settingsUrl: config.SETTINGS_URL,
      internalSecret: config.PACK_INTERNAL_SECRET,
      service: 'gateway',
      logger,
      path: GENERAL_SETTINGS_PLAINTEXT_PATH,
    });
    /** Read again before each sign-in and mail (a 304 while nothing changed): a change applies at once. */
    const currentSettings = async (): Promise<GeneralSettings> => {
      try {
        await settingsCache.refresh();
      } catch (error) {
        if (!settingsCache.isLoaded())
          throw new ServiceUnavailableError('The general settings cannot be read; try again shortly.', {
            cause: error,
          });
        logger.warn({ err: error }, 'settings refresh failed; using the last settings read');
      }
      return settingsCache.get();
    };
    const identityProviderDispatcher = createTargetDispatcher({
      ...identityProviderPolicy(config.PACK_ALLOWED_TARGET_CIDRS),
      connectTimeoutMs: config.INTEGRATION_TIMEOUT_MS,
    });
    const signIn = new SignIn({
      users: repository,
      authenticator,
      directory: new LdapDirectory({
        userAttribute: config.LDAP_USER_ATTRIBUTE,
        timeoutMs: config.INTEGRATION_TIMEOUT_MS,
        logger,
      }),
      identityProvider: new OidcIdentityProvider({
        timeoutMs: config.INTEGRATION_TIMEOUT_MS,
        dispatcher: identityProviderDispatcher,
        discoveryCacheMs: config.OIDC_DISCOVERY_CACHE_MS,
      }),
      identityProviderDefaults: { issuerUrl: config.OIDC_ISSUER_URL, publicUrl: config.PUBLIC_URL },
      limiter: new MemoryFailureLimiter(config.SIGNIN_MAX_FAILURES, config.SIGNIN_FAILURE_WINDOW_SECONDS),
      settings: currentSettings,
      roles: {
        groups: config.SIGNIN_ROLE_GROUPS,
        defaultRole: config.SIGNIN_DEFAULT_ROLE === 'none' ? null : config.SIGNIN_DEFAULT_ROLE,
      },
      tokenTtlMs: config.SIGNIN_TOKEN_TTL_SECONDS * 1000,
      logger,
    });
    const notifier = new Notifier({
      users: repository,
      mailer: new SmtpMailer({ from: config.MAIL_FROM, timeoutMs: config.INTEGRATION_TIMEOUT_MS }),
      settings: currentSettings,
      logger,
    });
    const authenticateHeader = async (header: string | undefined) => {
      const token = tokenFromHeader(header);
      return token ? authenticator.authenticate(token) : null;
    };
    const upstreams = {
      catalog: config.CATALOG_URL,
      settings: config.SETTINGS_URL,
      'llm-gateway': config.LLM_GATEWAY_URL,
      'pipeline-orchestrator': config.PIPELINE_ORCHESTRATOR_URL,
      'webhook-dispatcher': config.WEBHOOK_DISPATCHER_URL,
    };
    const proxy = createProxy({
      upstreams,
      timeoutMs: config.UPSTREAM_TIMEOUT_MS,
      internalSecret: config.PACK_INTERNAL_SECRET,
      bodyLimitBytes: config.BODY_LIMIT_BYTES,
      logger,
      metrics,
      authenticate: authenticateHeader,
      mapError: mapDatabaseError,
    });
    const healthCounter = new MongoMinuteCounter(mongo.connection, logger);
    // Kept fresh by the settings event and poll: a health request costs no settings round trip.
    const healthLimits = new HealthLimits(healthCounter, () => settingsCache.get());
    // The document lists the gateway's own routes, the document's route among them.
    const apiDocument: ApiDocument = new ApiDocument({
      version: VERSION,
      routes: () => routes,
      upstreams,
      logger,
    });
    const routes: AnyRoute[] = [
      ...tokenRoutes(authenticator),
      ...authRoutes({
        signIn,
        authenticator,
        internalSecret: config.PACK_INTERNAL_SECRET,
        trustedProxyHops: config.TRUSTED_PROXY_HOPS,
      }),
      ...userRoutes(repository),
      ...mailRoutes(notifier),
      ...docsRoutes(apiDocument),
    ];
    return {
      routes,
      // Id claims only matter while their number is handed out.
      retained: [ID_CLAIMS],
      consumers: [settingsCache.consumer(), mailConsumer(notifier, oncePerEvent(mongo.connection))],
      authenticate: (req) => authenticateHeader(req.get('authorization')),
      front: serveConsole(
        { distDir: config.CONSOLE_DIST_DIR, logger },
        limitHealth(
          healthLimits,
          { trustedProxyHops: config.TRUSTED_PROXY_HOPS, logger, mapError: mapDatabaseError },
          proxy.handler,
        ),
      ),
      async onStart() {
        if (config.PACK_ADMIN_TOKEN)
          await authenticator.ensureAdminToken(config.PACK_ADMIN_USERNAME, config.PACK_ADMIN_TOKEN);
        await healthCounter.ensureIndexes();
        await authenticator.startRevocationPolling();
        settingsCache.start();
        return async () => {
          settingsCache.stop();
          authenticator.stop();
          await proxy.close();
          await identityProviderDispatcher.close();
        };
      },
    };
  },
};
