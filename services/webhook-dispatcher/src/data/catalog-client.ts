import { request } from 'undici';
import { changeInstanceStateSchema } from '@pack/contracts';
import { principalHeaders } from '@pack/http-kit';
import type { ChangeInstanceLookup } from '../domain/triggers';

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
