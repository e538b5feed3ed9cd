import type { Request } from 'express';
import { z } from 'zod';
import { decimalInteger } from './params';

/** `?limit=&offset=` of every list endpoint. */
export const listQuerySchema = z.object({
  limit: decimalInteger({ min: 1, max: 500 }).default(50).describe('How many results a page holds'),
  offset: decimalInteger().default(0).describe('How many results to skip'),
});
export type ListQuery = z.infer<typeof listQuerySchema>;

export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({
    count: z.number().int(),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(item),
  });
}

/** `{count, next, previous, results}` with next/previous as relative links keeping other query parameters. */
export function pageOf<T>(req: Request, query: ListQuery, count: number, results: T[]) {
  const link = (offset: number) => {
    const params = new URLSearchParams(req.query as Record<string, string>);
    params.set('limit', String(query.limit));
    params.set('offset', String(offset));
    return `${req.path}?${params.toString()}`;
  };
  return {
    count,
    next: query.offset + query.limit < count ? link(query.offset + query.limit) : null,
    previous: query.offset > 0 ? link(Math.max(0, query.offset - query.limit)) : null,
    results,
  };
}
