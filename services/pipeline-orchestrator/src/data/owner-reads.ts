import { parseExactJson, stringifyExactJson } from '@pack/contracts';
import { readFromOwner } from '@pack/http-kit';
import type { OwnerReads } from './directory-repository';

interface ServiceView {
  id: number;
  name: string;
  owner: { id: number; name: string };
}

interface LatestApprovedView {
  service_item: number;
  service: number;
  change_instance: number;
  declaration_id: number;
  declaration: Record<string, unknown>;
}

interface ModelView {
  id: number;
  name: string;
  provider: string;
  model_name: string;
  timeout: number;
  fallback_models?: number[];
}

/**
 * The catalog's Services and Service Items (with their latest approved declaration) and the
 * llm-gateway's models, read from their own APIs.
 */
export function ownerReads(options: {
  catalogUrl: string;
  llmGatewayUrl: string;
  internalSecret: string;
  service: string;
}): OwnerReads {
  const read = (baseUrl: string, path: string, parse?: (text: string) => unknown) =>
    readFromOwner({ baseUrl, path, internalSecret: options.internalSecret, service: options.service, parse });
  return {
    async service(id) {
      const found = (await read(options.catalogUrl, `/v1/catalog/services/${id}/`)) as ServiceView | null;
      return found && { service_id: found.id, name: found.name, owner: found.owner, deleted: false };
    },
    async serviceItem(id) {
      const path = `/v1/catalog/service_items/${id}/latest_approved_declaration/`;
      // The declaration's numbers keep their digits (docs/decisions/0039).
      const found = (await read(options.catalogUrl, path, parseExactJson)) as LatestApprovedView | null;
      return (
        found && {
          service_item_id: found.service_item,
          service_id: found.service,
          declaration_id: found.declaration_id,
          declaration_json: stringifyExactJson(found.declaration),
          change_instance_id: found.change_instance,
        }
      );
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
          fallback_models: found.fallback_models ?? [],
          deleted: false,
        }
      );
    },
  };
}
