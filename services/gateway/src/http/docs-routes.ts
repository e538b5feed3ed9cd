import path from 'node:path';
import type { Response } from 'express';
import { z } from 'zod';
import { NotFoundError, problemSchema, route } from '@pack/http-kit';
import type { ApiDocument } from './api-document';

/** Swagger UI comes from the swagger-ui-dist package, served from node_modules: no CDN. */
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

/** Everything the page loads comes from this origin; swagger-ui's stylesheet embeds its icons as data: images. */
export const DOCS_CSP =
  "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>The pack platform API</title>
    <link rel="stylesheet" href="swagger-ui.css" />
    <link rel="icon" type="image/png" href="favicon-32x32.png" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="swagger-ui-bundle.js"></script>
    <script src="init.js"></script>
  </body>
</html>
`;

// An inline script would need 'unsafe-inline'; the page's configuration is a file of its own.
// validatorUrl null: swagger-ui would otherwise send the document to an outside validator.
const INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: new URL('../openapi.json', window.location.href).href,
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

/** The page's files: generated ones by content, swagger-ui's by file name in its package. */
const ASSETS: Record<string, { type: string; content?: string }> = {
  'init.js': { type: 'text/javascript', content: INIT },
  'swagger-ui-bundle.js': { type: 'text/javascript' },
  'swagger-ui.css': { type: 'text/css' },
  'favicon-32x32.png': { type: 'image/png' },
  'swagger-ui-bundle.js.map': { type: 'application/json' },
  'swagger-ui.css.map': { type: 'application/json' },
};

function securityHeaders(res: Response) {
  res.setHeader('content-security-policy', DOCS_CSP);
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
}

/** A file of the swagger-ui-dist package; resolves once it is sent. */
function sendPackageFile(res: Response, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    res.sendFile(file, { root: SWAGGER_UI_DIR, maxAge: '1h', dotfiles: 'deny' }, (error) => {
      // A caller gone mid-transfer is no error of ours.
      if (error && !res.headersSent) reject(error instanceof Error ? error : new Error(String(error)));
      else resolve();
    });
  });
}

const documentSchema = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
  'x-missing-services': z.array(z.string()),
});

/**
 * The API reference: the merged OpenAPI document and a page that browses it. Both are public:
 * they describe the API and hold no data, and a browser cannot send a token when it opens a page.
 */
export function docsRoutes(document: ApiDocument) {
  return [
    route({
      method: 'get',
      path: '/v1/openapi.json',
      summary:
        'The OpenAPI 3.1 document of the public API, merged from the gateway and every service that answers',
      access: 'public',
      responses: {
        200: {
          description: 'The document; `x-missing-services` names the services left out',
          schema: documentSchema,
        },
      },
      handler: async () => ({
        body: await document.get(),
        // It holds no data, so tools on other origins (editors, client generators) may read it.
        headers: { 'access-control-allow-origin': '*' },
      }),
    }),
    route({
      method: 'get',
      path: '/v1/docs',
      summary: 'Redirects to the API reference page',
      access: 'public',
      responses: { 301: { description: 'To /v1/docs/' } },
      handler: ({ res }) => {
        res.redirect(301, 'docs/');
        return {};
      },
    }),
    route({
      method: 'get',
      path: '/v1/docs/',
      summary: 'The API reference page (Swagger UI) of /v1/openapi.json',
      access: 'public',
      responses: { 200: { description: 'An HTML page', mediaTypes: ['text/html'] } },
      handler: ({ res }) => {
        securityHeaders(res);
        res.type('text/html').send(PAGE);
        return {};
      },
    }),
    route({
      method: 'get',
      path: '/v1/docs/:asset',
      summary: 'A script, stylesheet or image of the API reference page',
      access: 'public',
      params: z.object({ asset: z.string().max(100) }),
      responses: {
        200: {
          description: 'The file',
          mediaTypes: [...new Set(Object.values(ASSETS).map((asset) => asset.type))],
        },
        404: { description: 'No such file', schema: problemSchema },
      },
      handler: async ({ params, res }) => {
        const asset = Object.hasOwn(ASSETS, params.asset) ? ASSETS[params.asset] : undefined;
        if (!asset) throw new NotFoundError(`no file ${params.asset} in the API reference`);
        securityHeaders(res);
        res.type(asset.type);
        if (asset.content !== undefined) res.send(asset.content);
        else await sendPackageFile(res, params.asset);
        return {};
      },
    }),
  ];
}
