import { parse as parseForm } from 'node:querystring';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { LOCAL_BILLING_PATH } from '../../../domain/billing/ports.ts';
import { BOUNDS } from '../../../domain/bounds.ts';
import { AppError } from '../../../domain/errors.ts';
import type { App, RouteDeps } from '../../types.ts';
import { checkoutPageHtml, portalPageHtml } from './local-pages-html.ts';

/**
 * The local billing provider's checkout and portal pages (registered only when it is the
 * provider in use). They stand in for Stripe's hosted pages, so they talk to the provider
 * adapter directly rather than to a domain use case. The unguessable id in the path is the
 * capability: no cookie, and the POSTs take an empty body, JSON or a form.
 */
export function registerLocalBillingPages(app: App, deps: RouteDeps): void {
  const local = deps.billing.local;
  if (!local) return;
  const dashboard = new URL(deps.billing.ctx.returnUrls.success).origin;
  const params = Type.Object({
    id: Type.String({ maxLength: BOUNDS.billing.localSessionIdMaxLength }),
  });
  const schema = { hide: true, params };

  app.register(async (scope: App) => {
    // HTML forms post x-www-form-urlencoded; only these routes accept it (400 elsewhere).
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, done) => done(null, parseForm(String(body))),
    );

    scope.get<{ Params: { id: string } }>(
      `${LOCAL_BILLING_PATH}/checkout/:id`,
      { schema },
      async (request, reply) => {
        const view = await local.viewCheckout(request.params.id);
        if (!view) throw new AppError('not_found', 'no such checkout');
        return sendPage(reply, dashboard, checkoutPageHtml(request.params.id, view));
      },
    );
    scope.post(`${LOCAL_BILLING_PATH}/checkout/:id/complete`, { schema }, async (request, reply) =>
      reply.redirect(await local.completeCheckout(request.params.id), 303),
    );
    scope.post(`${LOCAL_BILLING_PATH}/checkout/:id/cancel`, { schema }, async (request, reply) =>
      reply.redirect(await local.abandonCheckout(request.params.id), 303),
    );

    scope.get<{ Params: { id: string } }>(
      `${LOCAL_BILLING_PATH}/portal/:id`,
      { schema },
      async (request, reply) => {
        const view = await local.viewPortal(request.params.id);
        if (!view) throw new AppError('not_found', 'no such portal session, or it has expired');
        return sendPage(reply, dashboard, portalPageHtml(request.params.id, view));
      },
    );
    for (const [action, cancel] of [
      ['cancel', true],
      ['resume', false],
    ] as const) {
      scope.post(
        `${LOCAL_BILLING_PATH}/portal/:id/${action}`,
        { schema },
        async (request, reply) => {
          await local.setCancelAtPeriodEnd(request.params.id, cancel);
          return reply.redirect(`${LOCAL_BILLING_PATH}/portal/${request.params.id}`, 303);
        },
      );
    }
  });
}

function sendPage(reply: FastifyReply, dashboard: string, html: string): FastifyReply {
  return (
    reply
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      // The URL is a capability: keep it out of Referer headers, frames and caches.
      .header('Referrer-Policy', 'no-referrer')
      .header('X-Frame-Options', 'DENY')
      .header(
        'Content-Security-Policy',
        `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${dashboard}; ` +
          "frame-ancestors 'none'; base-uri 'none'",
      )
      .send(html)
  );
}
