/**
 * The corpus fixture server (docs/corpus.md): serves the pages of pages.ts from their packages
 * in node_modules on 127.0.0.1, and keeps Chromium off every other address.
 *
 * Two lines keep the pages local:
 *   - Rewriting: every absolute URL in a text response (HTML, CSS, JS, SVG, JSON) that names
 *     another host, `http(s)://`, `ws(s)://` (also with JSON's `\/` escapes) or
 *     protocol-relative `//host/`, is rewritten to `/__external__/<package>/<scheme>/<host>...`
 *     on this server, which answers 404 and counts the hit (`external`). XML namespace names
 *     (`xmlns="..."`, www.w3.org) are names, never fetched, and are left alone; so is this
 *     server's own origin.
 *   - The proxy: the renderer's Chromium is started with this server as its HTTP proxy
 *     (`proxyUrl`), loopback included, and Chromium then resolves no names of its own. So a URL
 *     that a page builds at run time, which no rewriting can see, still arrives here: a request
 *     for any other host, or a CONNECT (https, wss), is refused and counted (`escaped`). No
 *     connection ever leaves for another address.
 *
 * Files are served only from inside the listed packages' folders (no `..`, no symlink out).
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { extname, join, resolve, sep } from 'node:path';

const NODE_MODULES = resolve(import.meta.dirname, '..', '..', '..', 'node_modules');

/** Content types by extension; `text` ones are rewritten. */
const TYPES: Record<string, { type: string; text: boolean }> = {
  '.html': { type: 'text/html; charset=utf-8', text: true },
  '.htm': { type: 'text/html; charset=utf-8', text: true },
  '.css': { type: 'text/css; charset=utf-8', text: true },
  '.js': { type: 'text/javascript; charset=utf-8', text: true },
  '.mjs': { type: 'text/javascript; charset=utf-8', text: true },
  '.json': { type: 'application/json; charset=utf-8', text: true },
  '.svg': { type: 'image/svg+xml', text: true },
  '.xml': { type: 'application/xml', text: true },
  '.txt': { type: 'text/plain; charset=utf-8', text: true },
  '.md': { type: 'text/markdown; charset=utf-8', text: true },
  '.map': { type: 'application/json', text: false },
  '.png': { type: 'image/png', text: false },
  '.jpg': { type: 'image/jpeg', text: false },
  '.jpeg': { type: 'image/jpeg', text: false },
  '.gif': { type: 'image/gif', text: false },
  '.webp': { type: 'image/webp', text: false },
  '.ico': { type: 'image/x-icon', text: false },
  '.woff': { type: 'font/woff', text: false },
  '.woff2': { type: 'font/woff2', text: false },
  '.ttf': { type: 'font/ttf', text: false },
  '.otf': { type: 'font/otf', text: false },
  '.eot': { type: 'application/vnd.ms-fontobject', text: false },
  '.mp4': { type: 'video/mp4', text: false },
  '.webm': { type: 'video/webm', text: false },
};

const EXTERNAL_PREFIX = '/__external__/';

/** `scheme://host[:port]`, or with JSON's escaped slashes. */
const ABSOLUTE_URL =
  /\b(https?|wss?):(?:\/\/|\\\/\\\/)([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::(\d{1,5}))?/gi;
/**
 * `//host.name` where a URL can start (after a quote, `(`, `=`, `,` or white space) and a path,
 * quote, `?`, `#`, `)` or white space follows the host; the host has a dot.
 */
const PROTOCOL_RELATIVE =
  /(^|["'(=,\s])\/\/([a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+)(?::(\d{1,5}))?(?=[/"'?#)\s]|$)/gim;
/** Text just before a URL that makes it an XML namespace name. */
const XMLNS_BEFORE = /xmlns(?::[\w.-]+)?\s*=\s*["']$/;

export interface EscapedRequest {
  request: string;
  referer: string | null;
}

export interface CorpusServer {
  /** `http://127.0.0.1:port` */
  origin: string;
  /** `http://127.0.0.1:port`, Chromium's proxy. */
  proxyUrl: string;
  /** The URL of `path` in package `pkg`. */
  url(pkg: string, path: string): string;
  /** The external URLs (as the page named them) that were asked for, by package; all got 404. */
  external: Map<string, string[]>;
  /**
   * Requests for another host that reached the proxy, all refused: Chromium's own background
   * requests, and any URL a page built at run time past the rewriting (`referer` set).
   */
  escaped: EscapedRequest[];
  /** Files served, by package. */
  served: Map<string, number>;
  close(): Promise<void>;
}

/**
 * `text` with every absolute URL to a host other than `self` (host:port) pointed at
 * `/__external__/<pkg>/<scheme>/<host>[_<port>]` on `origin`, the rest of the URL kept.
 */
export function rewriteExternalUrls(
  text: string,
  pkg: string,
  origin: string,
  self: string,
): string {
  const target = (scheme: string, host: string, port: string | undefined): string => {
    const base = /^wss?$/i.test(scheme) ? origin.replace(/^http/, 'ws') : origin;
    const hostPart = host.replace(/[[\]:]/g, '_') + (port ? `_${port}` : '');
    return `${base}${EXTERNAL_PREFIX}${encodeURIComponent(pkg)}/${scheme.toLowerCase()}/${hostPart}`;
  };
  const absolute = text.replace(
    ABSOLUTE_URL,
    (match, scheme: string, host: string, port: string | undefined, offset: number) => {
      const hostPort = `${host.toLowerCase()}${port ? `:${port}` : ''}`;
      if (hostPort === self) return match;
      if (host.toLowerCase() === 'www.w3.org') return match;
      if (XMLNS_BEFORE.test(text.slice(Math.max(0, offset - 40), offset))) return match;
      return target(scheme, host, port);
    },
  );
  return absolute.replace(
    PROTOCOL_RELATIVE,
    (match, before: string, host: string, port: string | undefined) => {
      const hostPort = `${host.toLowerCase()}${port ? `:${port}` : ''}`;
      if (hostPort === self || host.toLowerCase() === 'www.w3.org') return match;
      return `${before}${target('https', host, port)}`;
    },
  );
}

/** The file of `rest` (URL-encoded, after `/<pkg>/`) inside `root`, or null if outside it. */
async function fileInside(root: string, rest: string): Promise<string | null> {
  let decoded: string;
  try {
    decoded = rest
      .split('/')
      .map((part) => decodeURIComponent(part))
      .join('/');
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  if (decoded.split('/').some((part) => part === '..' || part === '.')) return null;
  const candidate = resolve(root, decoded);
  if (!candidate.startsWith(root + sep)) return null;
  try {
    const real = await realpath(candidate);
    const realRoot = await realpath(root);
    if (!real.startsWith(realRoot + sep)) return null;
    if (!(await stat(real)).isFile()) return null;
    return real;
  } catch {
    return null;
  }
}

/** Serves `packages` (names as in node_modules) at `/<package>/<path>` on 127.0.0.1. */
export async function startCorpusServer(packages: readonly string[]): Promise<CorpusServer> {
  const external = new Map<string, string[]>();
  const escaped: EscapedRequest[] = [];
  const refuse = (req: IncomingMessage, request: string): void => {
    escaped.push({ request, referer: req.headers.referer ?? null });
  };
  const served = new Map<string, number>();
  // Longest names first, so that a package whose name prefixes another's never shadows it.
  const names = [...packages].sort((a, b) => b.length - a.length);
  let origin = '';
  let self = '';

  /** Records a request for a rewritten URL under the package whose file named it. */
  const noteExternal = (target: URL): void => {
    const [pkg = '?', scheme = '?', host = '?', ...rest] = target.pathname
      .slice(EXTERNAL_PREFIX.length)
      .split('/');
    let name = pkg;
    try {
      name = decodeURIComponent(pkg);
    } catch {
      // Kept as it came.
    }
    const list = external.get(name) ?? [];
    list.push(`${scheme}://${host}/${rest.join('/')}${target.search}`);
    external.set(name, list);
  };

  const notFound = (res: ServerResponse, why: string): void => {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`${why}\n`);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let target: URL;
    try {
      target = new URL(req.url ?? '/', origin);
    } catch {
      res.writeHead(400).end();
      return;
    }
    // An absolute-form request (Chromium uses this server as its proxy) for another host.
    if (target.host !== self || !/^https?:$/.test(target.protocol)) {
      refuse(req, `${req.method} ${target.href}`);
      notFound(res, 'refused: the corpus server reaches no other host');
      return;
    }
    const path = target.pathname;
    if (path.startsWith(EXTERNAL_PREFIX)) {
      noteExternal(target);
      notFound(res, 'external URL, not fetched');
      return;
    }
    const pkg = names.find((name) => path.startsWith(`/${name}/`));
    if (pkg === undefined) {
      notFound(res, 'not a corpus package');
      return;
    }
    const root = join(NODE_MODULES, pkg);
    const file = await fileInside(root, path.slice(pkg.length + 2));
    if (file === null) {
      notFound(res, 'no such file in the package');
      return;
    }
    const kind = TYPES[extname(file).toLowerCase()] ?? {
      type: 'application/octet-stream',
      text: false,
    };
    let body = await readFile(file);
    if (kind.text) {
      // latin1 maps bytes to characters one to one: the rewrite keeps every other byte as is.
      body = Buffer.from(rewriteExternalUrls(body.toString('latin1'), pkg, origin, self), 'latin1');
    }
    served.set(pkg, (served.get(pkg) ?? 0) + 1);
    res
      .writeHead(200, {
        'content-type': kind.type,
        'content-length': body.length,
        'cache-control': 'no-store',
      })
      .end(req.method === 'HEAD' ? undefined : body);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  // https:// and wss:// through the proxy: never tunnelled anywhere.
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    refuse(req, `CONNECT ${req.url ?? '?'}`);
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket) => {
    const url = req.url ?? '/';
    if (url.startsWith(EXTERNAL_PREFIX)) noteExternal(new URL(url, origin));
    else refuse(req, `UPGRADE ${url}`);
    socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  self = `127.0.0.1:${port}`;
  return {
    origin,
    proxyUrl: origin,
    url: (pkg, path) => `${origin}/${pkg}/${path}`,
    external,
    escaped,
    served,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
