import type { AnyRoute } from '@pack/http-kit';
import type { ServiceDefinition } from '@pack/runtime';
import { gatewayModels } from './data/models';
import { TokenRepository } from './data/token-repository';
import { Authenticator } from './domain/authenticator';
import { tokenFromHeader } from './domain/token';
import { ApiDocument } from './http/api-document';
import { docsRoutes } from './http/docs-routes';
import { createProxy } from './http/proxy';
import { tokenRoutes } from './http/token-routes';
import type { GatewayConfig } from './config';

export { gatewayConfig, gatewayEnvSchema, type GatewayConfig } from './config';
export { ROUTING_TABLE } from './domain/routing';

const VERSION = '0.1.0';

export const gatewayService: ServiceDefinition<GatewayConfig> = {
  name: 'gateway',
  version: VERSION,
  usesBroker: false,
  public: true,
  setup({ config, mongo, logger, metrics }) {
    const repository = new TokenRepository(mongo.connection, gatewayModels(mongo.connection));
    const authenticator = new Authenticator(repository, logger, config.REVOCATION_POLL_MS);
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
    });
    // The document lists the gateway's own routes, the document's route among them.
    const apiDocument: ApiDocument = new ApiDocument({
      version: VERSION,
      routes: () => routes,
      upstreams,
      logger,
    });
    const routes: AnyRoute[] = [...tokenRoutes(authenticator), ...docsRoutes(apiDocument)];
    return {
      routes,
      authenticate: (req) => authenticateHeader(req.get('authorization')),
      front: proxy.handler,
      async onStart() {
        if (config.PACK_ADMIN_TOKEN)
          await authenticator.ensureAdminToken(config.PACK_ADMIN_USERNAME, config.PACK_ADMIN_TOKEN);
        await authenticator.startRevocationPolling();
        return async () => {
          authenticator.stop();
          await proxy.close();
        };
      },
    };
  },
};
