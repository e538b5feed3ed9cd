import type { Principal } from '@pack/contracts';
import type { ItemFilter } from '../data/catalog-repository';

/**
 * Who sees what (DESIGN section 3): admins everything; a service owner the Services they own and
 * the items and change instances of those Services; a consumer their own items and change
 * instances. Anything outside a caller's scope is answered 404, never 403, so existence does not leak.
 */
export function itemScope(principal: Principal): ItemFilter {
  switch (principal.role) {
    case 'admin':
      return {};
    case 'service_owner':
      return { service_owner_id: principal.id };
    case 'consumer':
      return { consumer_id: principal.id };
  }
}

export function inItemScope(principal: Principal, record: { service_owner_id: number; consumer_id: number }): boolean {
  switch (principal.role) {
    case 'admin':
      return true;
    case 'service_owner':
      return record.service_owner_id === principal.id;
    case 'consumer':
      return record.consumer_id === principal.id;
  }
}

/** Consumers browse every Service (they need one to submit to); owners see only their own. */
export function canSeeService(principal: Principal, service: { owner_id: number }): boolean {
  return principal.role !== 'service_owner' || service.owner_id === principal.id;
}

/** Only admins and the owning service owner change a Service. */
export function canChangeService(principal: Principal, service: { owner_id: number }): boolean {
  return principal.role === 'admin' || (principal.role === 'service_owner' && service.owner_id === principal.id);
}
