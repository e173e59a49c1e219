import type { ProxyAgent, request } from 'undici';
import type { WebhookSender } from '../../domain/jobs/ports.ts';
import type { Logger } from '../../lib/logger.ts';
import type { EgressPolicy } from '../egress/policy.ts';
import { type EgressProxy, startEgressProxy } from '../egress/proxy.ts';

/** Bytes of a receiver's answer kept (for the delivery's last error); the rest is dropped. */
const BODY_KEPT = 1024;

/**
 * Webhook deliveries go out through an egress proxy of their own, under the same rules as a
 * page's connections (docs/egress.md): the host is resolved once and the proxy connects to
 * the checked address, so a name that turned private since the job was queued, or a
 * redirect, reaches nothing. undici's ProxyAgent does the proxying (CONNECT tunnels). The
 * proxy starts, and undici is loaded, on the first delivery: a node that sends none (most
 * starts, every SQLite node without webhooks) never pays for either.
 */
export function createProxyWebhookSender(
  policy: EgressPolicy,
  logger: Logger,
): WebhookSender & {
  close(): Promise<void>;
} {
  let started: Promise<{ proxy: EgressProxy; agent: ProxyAgent; request: typeof request }> | null =
    null;
  const start = () => {
    started ??= import('undici').then(
      async (undici) => {
        const proxy = await startEgressProxy({ policy, logger });
        return { proxy, agent: new undici.ProxyAgent({ uri: proxy.url }), request: undici.request };
      },
      (err: unknown) => {
        started = null; // the next delivery tries to start it again
        throw err;
      },
    );
    return started;
  };
  return {
    async send({ url, headers, body, timeoutMs, signal }) {
      const { agent, request } = await start();
      const res = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: agent,
        signal: signal
          ? AbortSignal.any([AbortSignal.timeout(timeoutMs), signal])
          : AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        if (size < BODY_KEPT) chunks.push(Buffer.from(chunk as Uint8Array));
        size += (chunk as Uint8Array).length;
        if (size >= BODY_KEPT) break;
      }
      res.body.destroy();
      return {
        status: res.statusCode,
        body: Buffer.concat(chunks).toString('utf8', 0, BODY_KEPT).trim(),
      };
    },
    async close() {
      if (!started) return;
      const { proxy, agent } = await started.catch(() => ({ proxy: null, agent: null }));
      await agent?.close().catch(() => {});
      await proxy?.close();
    },
  };
}
