/**
 * The service's renderer: Chromium behind the egress proxy, started on first use. Every
 * connection a page opens goes through the proxy, and every main-frame navigation (redirects
 * included) is checked against the same policy before it is followed.
 */

import type { Logger } from '../../../lib/logger.ts';
import type { EgressPolicy } from '../../egress/policy.ts';
import { type EgressRefusal, startEgressProxy } from '../../egress/proxy.ts';
import { checkTargetUrl } from '../../egress/url-check.ts';
import { type ChromiumRenderSettings, createChromiumRenderer } from './chromium-renderer.ts';
import { createLazyRenderer, type LazyRenderer } from './lazy-renderer.ts';

export interface BrowserRendererOptions {
  /** What pages may reach (the page policy of createEgress). */
  policy: EgressPolicy;
  /**
   * Chromium's settings, as the config parses them (its render section); the proxy and the
   * navigation check are added here.
   */
  render: ChromiumRenderSettings;
  /** Profiles, temp files and caches go under it. */
  dataDir: string;
  /** Told about every connection the proxy refused. */
  onRefused?: (refusal: EgressRefusal) => void;
  logger: Logger;
}

export function createBrowserRenderer(options: BrowserRendererOptions): LazyRenderer {
  const { policy, logger } = options;
  const onStartFailed = (err: unknown): void =>
    logger.error({ err: String(err) }, 'could not start the renderer');
  return createLazyRenderer({ onStartFailed }, async () => {
    const proxy = await startEgressProxy({
      policy,
      ...(options.onRefused ? { onRefused: options.onRefused } : {}),
      logger,
    });
    try {
      const real = await createChromiumRenderer({
        render: options.render,
        dataDir: options.dataDir,
        logger,
        proxyUrl: proxy.url,
        checkNavigation: async (url) => {
          await checkTargetUrl(policy, url);
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
