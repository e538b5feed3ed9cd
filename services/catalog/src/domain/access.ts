import type { Principal } from '@pack/contracts';

/**
 * Who sees what (DESIGN section 3): admins everything; a service owner the Services they own and
 * the items and change instances of those Services; a consumer their own items and change
 * instances, and every Service (to submit to). Anything outside a caller's scope is answered
 * 404, never 403, so existence does not leak.
 */
export function canSeeService(principal: Principal, service: { owner_id: number }): boolean {
  return principal.role !== 'service_owner' || service.owner_id === principal.id;
}

/** Only admins and the owning service owner change a Service. */
export function canChangeService(principal: Principal, service: { owner_id: number }): boolean {
  return (
    principal.role === 'admin' || (principal.role === 'service_owner' && service.owner_id === principal.id)
  );
}

/**
 * Whether an item or change instance is in the caller's scope. `serviceOwnerId` is the owner of
 * its Service now (undefined once the Service is deleted: then only admins and the consumer see it).
 */
export function inItemScope(
  principal: Principal,
  record: { consumer_id: number },
  serviceOwnerId: number | undefined,
): boolean {
  switch (principal.role) {
    case 'admin':
      return true;
    case 'service_owner':
      return serviceOwnerId === principal.id;
    case 'consumer':
      return record.consumer_id === principal.id;
  }
}
