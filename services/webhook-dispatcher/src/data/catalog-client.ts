import { request } from 'undici';
import { changeInstanceStateSchema, type ServiceSnapshot } from '@pack/contracts';
import { principalHeaders, readFromOwner } from '@pack/http-kit';
import type { ChangeInstanceLookup } from '../domain/firing/triggers';

/**
 * Reads a Change Instance through the catalog's API as the caller (so the catalog's own access
 * rules apply): the dispatcher never reads the catalog's database.
 */
export function catalogLookup(catalogUrl: string, internalSecret: string): ChangeInstanceLookup {
  return async (principal, id) => {
    const path = `/v1/catalog/change_instances/${id}/`;
    const response = await request(new URL(path, catalogUrl), {
      method: 'GET',
      headers: principalHeaders(internalSecret, 'GET', path, principal),
      headersTimeout: 5000,
      bodyTimeout: 5000,
    });
    if (response.statusCode === 404 || response.statusCode === 403) {
      await response.body.dump();
      return null;
    }
    const body = (await response.body.json()) as { service?: { id?: unknown }; state?: unknown };
    if (response.statusCode !== 200) throw new Error(`catalog answered ${response.statusCode}`);
    return { service_id: Number(body.service?.id), state: changeInstanceStateSchema.parse(body.state) };
  };
}

/** A Service as the catalog has it now (read as this service's system principal); null when there is none. */
export function catalogService(catalogUrl: string, internalSecret: string, service: string) {
  return async (id: number): Promise<Omit<ServiceSnapshot, 'version'> | null> => {
    const path = `/v1/catalog/services/${id}/`;
    const found = (await readFromOwner({ baseUrl: catalogUrl, path, internalSecret, service })) as {
      id: number;
      name: string;
      owner: { id: number; name: string };
    } | null;
    return found && { service_id: found.id, name: found.name, owner: found.owner, deleted: false };
  };
}
