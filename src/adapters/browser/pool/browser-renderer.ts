/**
 * The service's renderer: Chromium behind the egress proxy, started on first use. Every
 * connection a page opens goes through the proxy, and every main-frame navigation (redirects
 * included) is checked against the same policy before it is followed.
 */

import type { RenderSettings } from '../../../config/config.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { EgressPolicy } from '../../egress/policy.ts';
import { type EgressRefusal, startEgressProxy } from '../../egress/proxy.ts';
import { ProxyRoutes } from '../../egress/proxy-routes.ts';
import { checkTargetUrl, screenTargetUrl } from '../../egress/url-check.ts';
import { type ChromiumRenderSettings, createChromiumRenderer } from './chromium-renderer.ts';
import { createLazyRenderer, type LazyRenderer } from './lazy-renderer.ts';

export interface BrowserRendererOptions {
  /** What pages may reach (the page policy of createEgress). */
  policy: EgressPolicy;
  /**
   * Chromium's settings, as the config parses them (its render section); the proxy and the
   * navigation check are added here.
   */
  render: ChromiumRenderSettings & Pick<RenderSettings, 'proxies' | 'proxyTimeoutMs'>;
  /** Profiles, temp files and caches go under it. */
  dataDir: string;
  /** Told about every connection the proxy refused. */
  onRefused?: (refusal: EgressRefusal) => void;
  logger: Logger;
}

export function createBrowserRenderer(options: BrowserRendererOptions): LazyRenderer {
  const { policy, logger } = options;
  const routes = new ProxyRoutes(options.render.proxies);
  const onStartFailed = (err: unknown): void =>
    logger.error({ err: String(err) }, 'could not start the renderer');
  return createLazyRenderer({ onStartFailed }, async () => {
    const proxy = await startEgressProxy({
      policy,
      proxyTimeoutMs: options.render.proxyTimeoutMs,
      ...(options.onRefused ? { onRefused: options.onRefused } : {}),
      logger,
    });
    try {
      const real = await createChromiumRenderer({
        render: options.render,
        dataDir: options.dataDir,
        logger,
        proxyUrl: proxy.url,
        lanes: { routes, open: (route) => proxy.openLane(route) },
        checkNavigation: async (url, how) => {
          if (how.resolve) await checkTargetUrl(policy, url);
          else screenTargetUrl(policy, url);
        },
      });
      return {
        ...real,
        render: real.render.bind(real),
        stats: real.stats.bind(real),
        ready: real.ready.bind(real),
        close: async () => {
          await real.close();
          await proxy.close();
        },
      };
    } catch (err) {
      await proxy.close();
      throw err;
    }
  });
}
