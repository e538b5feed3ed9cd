import { z } from 'zod';

export const ROLES = ['admin', 'service_owner', 'consumer'] as const;
export const roleSchema = z.enum(ROLES);
export type Role = z.infer<typeof roleSchema>;

/** The authenticated caller, as the gateway hands it to the services. */
export const principalSchema = z.object({
  id: z.number().int().nonnegative(),
  username: z.string().min(1),
  role: roleSchema,
});
export type Principal = z.infer<typeof principalSchema>;

/**
 * The identity a service uses when it calls another service's HTTP API inside the cluster
 * (id 0 belongs to no user). Only holders of the internal secret can sign it, and they could
 * sign any principal, so it grants nothing new.
 */
export function systemPrincipal(service: string): Principal {
  return { id: 0, username: `system:${service}`, role: 'admin' };
}
