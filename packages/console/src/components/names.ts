/**
 * How the console names things people pick out by eye: a Service by its name, a Service Item by
 * its Service and its number. An id alone only where the name is not known.
 */
export const serviceName = (service: { id: number; name?: string | null }) =>
  service.name ?? `Service ${service.id}`;

export const itemName = (service: { id: number; name?: string | null }, itemId: number) =>
  `${serviceName(service)} · item ${itemId}`;
