import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import { Marked, type Tokens } from 'marked';
import type { App } from './types.ts';

/** The repository's docs/ folder: the site's pages are its Markdown files, as committed. */
export const DOCS_DIR = path.resolve(import.meta.dirname, '..', '..', 'docs');

/** The site's pages, in the order of its navigation; `slug` '' is /docs itself. */
export const DOC_PAGES: ReadonlyArray<{ slug: string; file: string; nav: string }> = [
  { slug: '', file: 'getting-started.md', nav: 'Getting started' },
  { slug: 'options', file: 'options.md', nav: 'Options, with images' },
  { slug: 'api-guide', file: 'api.md', nav: 'API guide' },
  { slug: 'monitors', file: 'monitors.md', nav: 'Monitors' },
  { slug: 'errors', file: 'errors.md', nav: 'Errors and retries' },
  { slug: 'python', file: 'python.md', nav: 'Python client' },
  { slug: 'limits', file: 'plans-and-limits.md', nav: 'Plans and limits' },
  { slug: 'self-hosting', file: 'deployment.md', nav: 'Self-hosting' },
  { slug: 'security', file: 'security.md', nav: 'Security model' },
  { slug: 'engine', file: 'engine.md', nav: 'The engine' },
  { slug: 'egress', file: 'egress.md', nav: 'Egress rules' },
  { slug: 'mcp', file: 'mcp.md', nav: 'MCP server' },
  { slug: 'contents', file: 'README.md', nav: 'All pages' },
];
/** Sections the navigation links to directly. */
const SHORTCUTS = [
  { href: '/docs/api-guide#signed-render-links', nav: 'Signed links' },
  { href: '/docs/api-guide#async-captures', nav: 'Async captures' },
  { href: '/docs/api-guide#webhooks', nav: 'Webhooks' },
  { href: '/docs/api', nav: 'API reference (OpenAPI)' },
];

const pageHref = (slug: string) => (slug === '' ? '/docs' : `/docs/${slug}`);
const bySource = new Map(DOC_PAGES.map((p) => [p.file, p]));

/** GitHub's heading anchors (what the docs' own `file.md#anchor` links use). */
export function headingId(text: string): string {
  return text
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A docs link as the site serves it: `api.md#x` -> `/docs/api-guide#x`; `images/a.png` ->
 * `/docs/images/a.png`; outside links unchanged; a file the site does not serve (the
 * README, ARCHITECTURE.md) -> null, shown as its text.
 */
export function siteHref(href: string): string | null {
  if (/^[a-z]+:/i.test(href) || href.startsWith('#') || href.startsWith('/')) return href;
  const [file = '', anchor] = href.split('#');
  if (file.startsWith('images/')) return `/docs/${file}`;
  const page = bySource.get(file);
  if (!page) return null;
  return `${pageHref(page.slug)}${anchor ? `#${anchor}` : ''}`;
}

function renderer(): Marked {
  const marked = new Marked({ gfm: true });
  marked.use({
    renderer: {
      heading(
        this: { parser: { parseInline(t: Tokens.Generic[]): string } },
        token: Tokens.Heading,
      ) {
        const inner = this.parser.parseInline(token.tokens);
        const id = headingId(token.text);
        return `<h${token.depth} id="${id}"><a class="anchor" href="#${id}">${inner}</a></h${token.depth}>\n`;
      },
      link(this: { parser: { parseInline(t: Tokens.Generic[]): string } }, token: Tokens.Link) {
        const inner = this.parser.parseInline(token.tokens);
        const href = siteHref(token.href);
        if (href === null) return `<span class="offsite">${inner}</span>`;
        return `<a href="${escapeHtml(href)}">${inner}</a>`;
      },
      image(token: Tokens.Image) {
        const src = siteHref(token.href) ?? token.href;
        return `<img src="${escapeHtml(src)}" alt="${escapeHtml(token.text)}">`;
      },
    },
  });
  return marked;
}

function layout(title: string, current: string, body: string): string {
  const nav = DOC_PAGES.filter((p) => p.slug !== 'contents')
    .map((p) => {
      const href = pageHref(p.slug);
      const here = href === current ? ' aria-current="page"' : '';
      return `<li><a href="${href}"${here}>${escapeHtml(p.nav)}</a></li>`;
    })
    .concat(SHORTCUTS.map((s) => `<li><a href="${s.href}">${escapeHtml(s.nav)}</a></li>`))
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Shotsmith docs</title>
<link rel="stylesheet" href="/docs/site.css">
</head><body>
<header class="top"><a class="brand" href="/">Shotsmith</a> <a href="/docs">Docs</a> <a href="/dashboard">Dashboard</a></header>
<div class="frame">
<nav aria-label="Documentation"><ul>${nav}</ul></nav>
<main>${body}</main>
</div>
</body></html>
`;
}

/** Every page rendered once, on first use (the files do not change under a running service). */
async function renderAll(docsDir: string): Promise<Map<string, string>> {
  const marked = renderer();
  const pages = new Map<string, string>();
  for (const page of DOC_PAGES) {
    const source = await readFile(path.join(docsDir, page.file), 'utf8');
    const title = /^# (.+)$/m.exec(source)?.[1] ?? page.nav;
    const body = await marked.parse(source);
    pages.set(pageHref(page.slug), layout(title, pageHref(page.slug), body));
  }
  return pages;
}

const POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The documentation site at /docs (docs/ rendered with `marked`, a maintained Markdown
 * parser with GitHub's flavour): getting started, the options with real captures, the API
 * guide, errors, limits, self-hosting and the security model, beside the OpenAPI reference
 * at /docs/api. No scripts; the one style sheet and the images are our own files.
 */
export async function registerDocsSite(app: App, docsDir = DOCS_DIR): Promise<void> {
  let rendered: Promise<Map<string, string>> | null = null;
  const hidden = { schema: { hide: true } };
  for (const page of DOC_PAGES) {
    app.get(pageHref(page.slug), hidden, async (_request, reply) => {
      rendered ??= renderAll(docsDir).catch((err: unknown) => {
        rendered = null; // tried again on the next request
        throw err;
      });
      const html = await rendered.then(
        (pages) => pages.get(pageHref(page.slug)),
        () => null,
      );
      if (html === null || html === undefined) {
        // A deployment without docs/ (the Dockerfile copies it): say so, the API is fine.
        return reply
          .status(503)
          .header('Content-Type', 'text/plain; charset=utf-8')
          .send('The documentation files (docs/) are missing from this deployment.\n');
      }
      return reply
        .header('Content-Type', 'text/html; charset=utf-8')
        .header('Content-Security-Policy', POLICY)
        .header('X-Content-Type-Options', 'nosniff')
        .header('Cache-Control', 'no-cache')
        .send(html);
    });
  }
  app.get('/docs/site.css', hidden, async (_request, reply) =>
    reply
      .header('Content-Type', 'text/css; charset=utf-8')
      .header('Cache-Control', 'public, max-age=3600')
      .send(await readFile(path.join(docsDir, 'site', 'site.css'), 'utf8')),
  );
  await app.register(fastifyStatic, {
    root: path.join(docsDir, 'images'),
    prefix: '/docs/images/',
    decorateReply: false,
    index: false,
    dotfiles: 'deny',
    maxAge: '1h',
  });
}
