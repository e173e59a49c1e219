import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sleep } from './fixtures.ts';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A webhook receiver on loopback: records every POST and answers with the next status of
 * `statuses` (the last one repeats), as a customer's endpoint would.
 */
export interface WebhookReceiver {
  url: string;
  hostPort: string;
  received: ReceivedWebhook[];
  /** Statuses to answer, in order; the last one repeats. */
  answer(...statuses: number[]): void;
  /** Waits until `n` requests arrived (or fails after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(path = '/hooks/shots'): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let statuses = [200];
  let served = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      const status = statuses[Math.min(served++, statuses.length - 1)] ?? 200;
      res
        .writeHead(status, { 'content-type': 'text/plain' })
        .end(status >= 300 ? `status ${status}` : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    hostPort: `127.0.0.1:${port}`,
    received,
    answer(...next) {
      statuses = next;
      served = 0;
    },
    async waitFor(n, timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > end) {
          throw new Error(`waited ${timeoutMs} ms for ${n} webhooks, got ${received.length}`);
        }
        await sleep(50);
      }
      return received.slice(0, n);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls a job's status URL until it is finished. */
export async function waitForJob(
  statusUrl: string,
  key: string,
  timeoutMs = 60_000,
): Promise<Record<string, unknown>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(statusUrl, { headers: { 'x-api-key': key } });
    assert.equal(res.status, 200, await res.clone().text());
    const body = (await res.json()) as Record<string, unknown>;
    if (body.status === 'succeeded' || body.status === 'failed') return body;
    if (Date.now() > end) throw new Error(`job still ${String(body.status)} after ${timeoutMs} ms`);
    await sleep(100);
  }
}
