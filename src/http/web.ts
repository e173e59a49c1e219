import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyReply } from 'fastify';
import type { App } from './types.ts';

/** Where `npm run build:web` writes the landing page and the dashboard (web/vite.config.ts). */
export const WEB_DIST_DIR = path.resolve(import.meta.dirname, '..', '..', 'web', 'dist');

export interface WebOptions {
  /** The API's public origin (PUBLIC_URL): image URLs point there, and API calls may too. */
  apiOrigin: string;
  /** Default WEB_DIST_DIR; tests point it elsewhere. */
  distDir?: string;
}

/**
 * The policy on the two HTML pages. Scripts and styles come only from our own hashed files
 * (React sets inline styles through the CSSOM, which CSP does not restrict). Images and API
 * calls may also go to PUBLIC_URL, for a page served under another name than the API's.
 */
export function contentSecurityPolicy(apiOrigin: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob: ${apiOrigin}`,
    `connect-src 'self' ${apiOrigin}`,
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Serves web/dist from this process: `/` is the landing page, `/dashboard` and everything
 * under it the dashboard (it routes on the client), `/assets/*` the hashed bundles with a
 * year of immutable caching (brotli or gzip siblings when the client accepts them). HTML is
 * read on each request with `no-cache`, so a rebuild shows without a restart. Nothing here
 * overlaps the API, /docs, /images or /healthz. Without a build the pages answer a short
 * note on how to make one; the API runs regardless.
 */
export async function registerWeb(app: App, options: WebOptions): Promise<void> {
  const distDir = options.distDir ?? WEB_DIST_DIR;
  const csp = contentSecurityPolicy(options.apiOrigin);

  await app.register(fastifyStatic, {
    root: path.join(distDir, 'assets'),
    prefix: '/assets/',
    decorateReply: false,
    index: false,
    dotfiles: 'deny',
    immutable: true,
    maxAge: '365d',
    preCompressed: true,
    // The directory may not exist until the first build; files are looked up per request.
    suppressWarning: true,
  });

  const page = (file: string) => async (_request: unknown, reply: FastifyReply) => {
    const html = await readFile(path.join(distDir, file), 'utf8').catch(() => null);
    reply
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'strict-origin-when-cross-origin')
      .header('X-Frame-Options', 'DENY');
    if (html === null) {
      return reply
        .status(503)
        .header('Cache-Control', 'no-store')
        .header('Content-Security-Policy', "default-src 'none'; base-uri 'none'")
        .send(MISSING_BUILD_PAGE);
    }
    return reply
      .header('Cache-Control', 'no-cache')
      .header('Content-Security-Policy', csp)
      .send(html);
  };

  const hidden = { schema: { hide: true } };
  app.get('/', hidden, page('index.html'));
  app.get('/dashboard', hidden, page('dashboard.html'));
  app.get('/dashboard/*', hidden, page('dashboard.html'));
}

const MISSING_BUILD_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Shotsmith: the web build is missing</title></head>
<body>
<h1>The web build is missing</h1>
<p>The API is running (see <a href="/docs">/docs</a>), but the landing page and the dashboard
have not been built yet. From the project directory, run:</p>
<pre>npm run build:web</pre>
<p>and reload this page. <code>npm start</code> builds them automatically when they are
missing or out of date.</p>
</body></html>
`;
