import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PNG } from 'pngjs';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface FixtureSite {
  /** `http://host:port` */
  origin: string;
  /** `host:port`, for EGRESS_ALLOWLIST. */
  hostPort: string;
  port: number;
  /** Requests seen, by path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** A local site for capture targets: a route table of paths to handlers or HTML strings. */
export async function startSite(
  routes: Record<string, Handler | string>,
  host = '127.0.0.1',
): Promise<FixtureSite> {
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes[path];
    if (route === undefined) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>not found</h1>');
      return;
    }
    if (typeof route === 'string') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(route);
      return;
    }
    Promise.resolve(route(req, res)).catch(() => res.destroy());
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${port}`,
    hostPort: `${host}:${port}`,
    port,
    hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const page = (body: string, head = '') =>
  `<!doctype html><html><head><meta charset="utf-8">${head}</head><body style="margin:0">${body}</body></html>`;

/** PNG IHDR width/height, JPEG SOF, WebP VP8/VP8L/VP8X: the image's own pixel size. */
export function imageSize(buf: Buffer): { format: string; width: number; height: number } {
  if (buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return { format: 'png', width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
  }
  if (buf[0] === 0xff && buf[1] === 0xd8) {
    let i = 2;
    while (i < buf.length) {
      if (buf[i] !== 0xff) throw new Error('bad jpeg');
      const marker = buf[i + 1] ?? 0;
      const len = buf.readUInt16BE(i + 2);
      if (
        marker >= 0xc0 &&
        marker <= 0xcf &&
        marker !== 0xc4 &&
        marker !== 0xc8 &&
        marker !== 0xcc
      ) {
        return { format: 'jpeg', height: buf.readUInt16BE(i + 5), width: buf.readUInt16BE(i + 7) };
      }
      i += 2 + len;
    }
    throw new Error('jpeg without SOF');
  }
  if (buf.toString('ascii', 0, 4) === 'RIFF' && buf.toString('ascii', 8, 12) === 'WEBP') {
    const chunk = buf.toString('ascii', 12, 16);
    if (chunk === 'VP8X') {
      return {
        format: 'webp',
        width: 1 + buf.readUIntLE(24, 3),
        height: 1 + buf.readUIntLE(27, 3),
      };
    }
    if (chunk === 'VP8L') {
      const bits = buf.readUInt32LE(21);
      return { format: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
    }
    if (chunk === 'VP8 ') {
      return {
        format: 'webp',
        width: buf.readUInt16LE(26) & 0x3fff,
        height: buf.readUInt16LE(28) & 0x3fff,
      };
    }
  }
  throw new Error('unknown image format');
}

/**
 * A page of one box whose colour a test changes between captures (a monitor's runs): serve
 * `handler` at a path and set `colour` before the capture that should see it.
 */
export class ColourBox {
  colour = 'rgb(0, 0, 255)';
  readonly width: number;
  readonly height: number;
  constructor(width = 200, height = 150) {
    this.width = width;
    this.height = height;
  }

  readonly handler: Handler = (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        page(
          `<div style="width:${this.width}px;height:${this.height}px;background:${this.colour}"></div>`,
        ),
      );
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type Rgb = [number, number, number];

/** A decoded PNG's colour at (x, y), fractions rounded down. */
export function pngPixel(png: PNG, x: number, y: number): Rgb {
  const i = (Math.floor(y) * png.width + Math.floor(x)) * 4;
  return [png.data[i] ?? 0, png.data[i + 1] ?? 0, png.data[i + 2] ?? 0];
}

/** Within 40 of `expected` on every channel (scaling and encoding blur edges and colours). */
export function assertNear(actual: Rgb, expected: Rgb, what: string): void {
  const far = actual.some((v, i) => Math.abs(v - (expected[i] ?? 0)) > 40);
  assert.ok(!far, `${what}: ${actual.join(',')} is not ${expected.join(',')}`);
}
