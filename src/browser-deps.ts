/**
 * The composition of the renderer (Chromium behind the egress proxy) and the submitted-URL
 * guard, one policy, chosen from config. The browser part of the composition root
 * (parts/browser.ts) takes them as they are built here, in a module of its own with light
 * imports, so that main.ts can start Chromium before it loads the rest of the service
 * (docs/deployment.md, "Start-up").
 */
import { createBrowserRenderer, type LazyRenderer } from './adapters/browser/index.ts';
import { createEgress } from './adapters/egress/guard.ts';
import type { EgressPolicy } from './adapters/egress/policy.ts';
import type { Resolver } from './adapters/egress/resolver.ts';
import type { Config } from './config/config.ts';
import type { TargetGuard } from './domain/captures/ports.ts';
import type { Logger } from './lib/logger.ts';

export interface BrowserDeps {
  guard: TargetGuard;
  renderer: LazyRenderer;
  /** The egress rules webhook deliveries go out under (their own proxy, jobs). */
  webhookPolicy: EgressPolicy;
}

export interface BrowserDepsOptions {
  /** Name resolution for the egress checks (tests: slow, dead or local names, no real DNS). */
  resolver?: Resolver;
  /** The machine's own interface addresses, refused like loopback unless allowlisted. */
  interfaceAddresses?: () => Iterable<string>;
  /** Told about every connection the egress proxy refused. */
  onRefused?: () => void;
  logger: Logger;
}

export function buildBrowser(config: Config, options: BrowserDepsOptions): BrowserDeps {
  const egress = createEgress({
    allowlist: config.render.egressAllowlist,
    selfPorts: [config.server.port],
    ...(options.resolver ? { resolver: options.resolver } : {}),
    ...(options.interfaceAddresses ? { interfaceAddresses: options.interfaceAddresses } : {}),
  });
  const renderer = createBrowserRenderer({
    policy: egress.pagePolicy,
    render: config.render,
    dataDir: config.data.dir,
    ...(options.onRefused ? { onRefused: options.onRefused } : {}),
    logger: options.logger,
  });
  return { guard: egress.guard, renderer, webhookPolicy: egress.webhookPolicy };
}
