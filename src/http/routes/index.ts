import type { App, RouteDeps } from '../types.ts';
import { registerAccountUsage } from './account/dashboard-usage.ts';
import { registerLogIn } from './account/log-in.ts';
import { registerLogOut } from './account/log-out.ts';
import { registerMe } from './account/me.ts';
import { registerSignUp } from './account/sign-up.ts';
import { registerGetUsage } from './account/usage.ts';
import { registerBillingCheckout } from './billing/checkout.ts';
import { registerLocalBillingPages } from './billing/local-pages.ts';
import { registerBillingPortal } from './billing/portal.ts';
import { registerBillingSubscription } from './billing/subscription.ts';
import { registerBillingWebhook } from './billing/webhook.ts';
import { registerChangeDestinations } from './destinations/change.ts';
import { registerCreateDestination } from './destinations/create.ts';
import { registerReadDestinations } from './destinations/read.ts';
import {
  byApiKey as destinationsByKey,
  bySession as destinationsBySession,
} from './destinations/surface.ts';
import { registerCreateKey } from './keys/create.ts';
import { registerDeleteKey } from './keys/delete.ts';
import { registerListKeys } from './keys/list.ts';
import { registerReplaceSigningSecret } from './keys/signing-secret.ts';
import { registerListDevices } from './meta/devices.ts';
import { registerHealth } from './meta/health.ts';
import { registerListPlans } from './meta/plans.ts';
import { registerListProxies } from './meta/proxies.ts';
import { registerMonitors } from './monitors/register.ts';
import { byApiKey, bySession } from './monitors/surface.ts';
import { registerCreateScreenshot } from './screenshots/create.ts';
import { registerCreateBatch } from './screenshots/create-batch.ts';
import { registerAccountScreenshots } from './screenshots/dashboard.ts';
import { registerDeleteScreenshot } from './screenshots/delete.ts';
import { registerDemoScreenshot } from './screenshots/demo.ts';
import { registerGetScreenshot } from './screenshots/get.ts';
import { registerGetBatch } from './screenshots/get-batch.ts';
import { registerListScreenshots } from './screenshots/list.ts';
import { registerRenderLink } from './screenshots/render-link.ts';
import { registerServeImage } from './screenshots/serve-image.ts';
import { registerWebhookDeliveries } from './webhooks/deliveries.ts';
import { registerWebhookSecret } from './webhooks/secret.ts';

/**
 * Every route of the API, one file per operation in the folder of its resource (README.md).
 * The order is the API document's: openapi.json lists the paths as they are registered, so a
 * route is appended where its neighbours in the document are.
 */
export function registerRoutes(app: App, deps: RouteDeps): void {
  registerHealth(app, deps);
  registerListPlans(app, deps);
  registerListDevices(app);
  registerListProxies(app, deps);
  registerSignUp(app, deps);
  registerLogIn(app, deps);
  registerLogOut(app, deps);
  registerMe(app, deps);
  registerCreateKey(app, deps);
  registerListKeys(app, deps);
  registerDeleteKey(app, deps);
  registerReplaceSigningSecret(app, deps);
  registerBillingSubscription(app, deps);
  registerBillingCheckout(app, deps);
  registerBillingPortal(app, deps);
  registerBillingWebhook(app, deps);
  registerLocalBillingPages(app, deps);
  registerCreateScreenshot(app, deps);
  registerCreateBatch(app, deps);
  registerGetBatch(app, deps);
  registerRenderLink(app, deps);
  for (const surface of [destinationsByKey(deps), destinationsBySession(deps)]) {
    registerCreateDestination(app, deps, surface);
    registerReadDestinations(app, deps, surface);
    registerChangeDestinations(app, deps, surface);
  }
  registerListScreenshots(app, deps);
  registerDeleteScreenshot(app, deps);
  registerGetScreenshot(app, deps);
  registerMonitors(app, deps, byApiKey(deps));
  registerGetUsage(app, deps);
  registerDemoScreenshot(app, deps);
  registerServeImage(app, deps);
  registerAccountUsage(app, deps);
  registerAccountScreenshots(app, deps);
  // The dashboard's monitors page: the same operations, by session.
  registerMonitors(app, deps, bySession(deps));
  registerWebhookSecret(app, deps);
  registerWebhookDeliveries(app, deps);
}
