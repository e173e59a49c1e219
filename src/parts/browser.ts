/**
 * The browser part: the renderer (Chromium behind the egress proxy) and the submitted-URL
 * guard. main.ts builds them early (browser-deps.ts, light imports) so that Chromium starts
 * while the rest loads; otherwise this builds them. Ready while the browser pool is up.
 */
import type { Metrics } from '../adapters/metrics/metrics.ts';
import { type BrowserDeps, type BrowserDepsOptions, buildBrowser } from '../browser-deps.ts';
import type { Config } from '../config/config.ts';
import type { Logger } from '../lib/logger.ts';
import { closeOnFailure, type Part } from './part.ts';

export async function browserPart(options: {
  config: Config;
  /** Already built (and maybe starting) by main.ts. */
  given: BrowserDeps | undefined;
  /** How the egress checks see names and this machine's addresses (tests). */
  egress: Pick<BrowserDepsOptions, 'resolver' | 'interfaceAddresses'>;
  metrics: Metrics;
  /** Launch the browser now instead of on the first capture. */
  eager: boolean;
  logger: Logger;
}): Promise<Part<BrowserDeps>> {
  const { metrics } = options;
  const browser =
    options.given ??
    buildBrowser(options.config, {
      ...options.egress,
      onRefused: () => metrics.refused('ssrf'),
      logger: options.logger,
    });
  const { renderer } = browser;
  const close = () => renderer.close();
  metrics.watchPool(() => renderer.stats());
  return closeOnFailure(close, async () => {
    if (options.eager) await renderer.warm();
    return {
      gives: browser,
      ready: {
        name: 'browser',
        check: async () => {
          if (!renderer.ready()) throw new Error('browser pool is restarting');
        },
      },
      close,
    };
  });
}
