import { z } from 'zod';

export const ROLES = ['admin', 'service_owner', 'consumer'] as const;
export const roleSchema = z.enum(ROLES);
export type Role = z.infer<typeof roleSchema>;

/** The authenticated caller, as the gateway hands it to the services. */
export const principalSchema = z.object({
  id: z.number().int().positive(),
  username: z.string().min(1),
  role: roleSchema,
});
export type Principal = z.infer<typeof principalSchema>;
