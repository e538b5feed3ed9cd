import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { Principal, Role } from '@pack/contracts';
import type { Logger } from '@pack/logging';

/** Who may call a route: anyone, any signed-in user, or the listed roles. */
export type Access = 'public' | 'authenticated' | readonly Role[];
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface Reply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

export interface HandlerInput<P, Q, B, A extends Access> {
  params: Infer<P>;
  query: Infer<Q>;
  body: Infer<B>;
  principal: A extends 'public' ? Principal | null : Principal;
  req: Request;
  res: Response;
  log: Logger;
}

/** One answer a route may give. */
export interface ResponseSpec {
  description: string;
  /** The JSON body (application/problem+json when it is the problem schema); none for 204 and the like. */
  schema?: z.ZodType;
  /** Media types of a body that is not JSON, which the handler writes to `res` itself (a page, a file). */
  mediaTypes?: readonly string[];
  /** Response headers a caller may rely on, by name, with what each says. */
  headers?: Record<string, string>;
}

/**
 * A route is declared once: path, access, request schemas and response schemas. Validation,
 * authorization and the OpenAPI document (openapi.ts) all come from this one declaration.
 */
export interface RouteSpec<
  P extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
  A extends Access = Access,
> {
  method: HttpMethod;
  /** Express path, trailing slash included as in the public API: `/v1/core/tokens/:id/`. */
  path: string;
  summary: string;
  access: A;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The body is users' JSON kept as sent: every number digit for digit (an ExactNumber where a
   * double would change it) instead of a 400 for numbers JSON.parse cannot read exactly.
   */
  exactNumbers?: boolean;
  /**
   * Cookies the route needs, by name, with what each carries: documented as required cookie
   * parameters (a value of cookie-octets); the handler reads and checks them itself.
   */
  cookies?: Record<string, string>;
  responses: Record<number, ResponseSpec>;
  handler: (input: HandlerInput<P, Q, B, A>) => Promise<Reply> | Reply;
}

export type AnyRoute = RouteSpec<z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined, Access>;

/** Identity helper that keeps the handler's input types inferred from the schemas. */
export function route<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  A extends Access = Access,
>(spec: RouteSpec<P, Q, B, A>): AnyRoute {
  return spec;
}
