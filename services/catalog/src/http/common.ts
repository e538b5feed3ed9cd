import { idParams, idSchema, problemTable } from '@pack/http-kit';

export { idParams };
export const optionalId = idSchema.optional();

/** The catalog's problem answers (the shared table; its 400 names no field list). */
export const pick = problemTable({ 400: 'Invalid request' });
