import { createReadStream, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { consolePageOf } from '@pack/console';
import type { Logger } from '@pack/logging';

/**
 * No inline script or style, nothing from another origin; chart.js sizes its canvas through the
 * CSSOM (element.style), which `style-src 'self'` allows. docs/decisions/0030.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const INDEX_CACHE = 'no-cache';
/** Files under assets/ carry a content hash in their name: a new build gets new names. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

const NOT_BUILT =
  'The operator console is not built. Build it with `pnpm --filter @pack/console build` ' +
  '(`pnpm start` builds it when it is missing or stale), then reload this page.\n' +
  'The API answers under /v1/ (reference: /v1/docs/).\n';

function securityHeaders(res: ServerResponse) {
  res.setHeader('content-security-policy', CONSOLE_CSP);
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
}

async function fileStats(file: string): Promise<Stats | undefined> {
  try {
    const stats = await stat(file);
    return stats.isFile() ? stats : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The file of the build a path names: `/` and console pages are index.html, `/assets/x` and other
 * top-level files are themselves; undefined for anything else (left to the routes after this one).
 */
export function consoleFileFor(pathname: string): { file: string; cache: string } | undefined {
  if (pathname === '/' || consolePageOf(pathname)) return { file: 'index.html', cache: INDEX_CACHE };
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  const parts = decoded.split('/').slice(1);
  const safe = parts.every((part) => /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(part) && !part.includes('..'));
  if (!safe || !TYPES[path.extname(decoded)]) return undefined;
  if (parts.length === 2 && parts[0] === 'assets') return { file: parts.join('/'), cache: ASSET_CACHE };
  if (parts.length === 1 && parts[0] !== 'index.html') return { file: parts[0]!, cache: INDEX_CACHE };
  return undefined;
}

function send(req: IncomingMessage, res: ServerResponse, file: string, stats: Stats, cache: string) {
  const etag = `W/"${stats.size.toString(16)}-${Math.floor(stats.mtimeMs).toString(16)}"`;
  securityHeaders(res);
  res.setHeader('cache-control', cache);
  res.setHeader('etag', etag);
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304).end();
    return;
  }
  res.writeHead(200, {
    'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
    'content-length': stats.size,
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res);
}

export interface ConsoleFrontOptions {
  /** The console's build (packages/console/dist, or CONSOLE_DIST_DIR). */
  distDir: string;
  logger: Logger;
}

type Front = (req: IncomingMessage, res: ServerResponse, next: () => void) => boolean;

/**
 * Serves the operator console at `/`, its assets and its pages (the SPA fallback), before
 * express; everything else goes on to `front` (the proxy, the health limits, express).
 */
export function serveConsole(options: ConsoleFrontOptions, front: Front): Front {
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return front(req, res, next);
    const pathname = (req.url ?? '/').split('?')[0]!;
    const wanted = consoleFileFor(pathname);
    if (!wanted) return front(req, res, next);
    const file = path.join(options.distDir, wanted.file);
    fileStats(file)
      .then(async (stats) => {
        if (stats) return send(req, res, file, stats, wanted.cache);
        // Not in the build: a file is someone else's path (left to the routes after this one), a page
        // without a build says how to build it.
        if (wanted.file !== 'index.html') {
          if (!front(req, res, next)) next();
          return;
        }
        securityHeaders(res);
        res.setHeader('cache-control', 'no-store');
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end(NOT_BUILT);
      })
      .catch((error: unknown) => {
        options.logger.warn({ err: error, path: pathname }, 'console file could not be sent');
        res.destroy();
      });
    return true;
  };
}
