import { readFromOwner } from '@pack/http-kit';
import type { OwnerReads } from './directory-repository';

interface ServiceView {
  id: number;
  name: string;
  owner: { id: number; name: string };
}

interface ModelView {
  id: number;
  name: string;
  provider: string;
  model_name: string;
  timeout: number;
}

/** The catalog's Services and the llm-gateway's models, read from their own APIs (issue 21). */
export function ownerReads(options: {
  catalogUrl: string;
  llmGatewayUrl: string;
  internalSecret: string;
  service: string;
}): OwnerReads {
  const read = (baseUrl: string, path: string) =>
    readFromOwner({ baseUrl, path, internalSecret: options.internalSecret, service: options.service });
  return {
    async service(id) {
      const found = (await read(options.catalogUrl, `/v1/catalog/services/${id}/`)) as ServiceView | null;
      return found && { service_id: found.id, name: found.name, owner: found.owner, deleted: false };
    },
    async model(id) {
      const found = (await read(options.llmGatewayUrl, `/v1/ai/llm_models/${id}/`)) as ModelView | null;
      return (
        found && {
          llm_model_id: found.id,
          name: found.name,
          provider: found.provider,
          model_name: found.model_name,
          timeout: found.timeout,
          deleted: false,
        }
      );
    },
  };
}
