import { createServer, type IncomingMessage, type Server } from 'node:http';

export interface StripeCall {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The form-encoded body the SDK sent, as flat `key[sub][0]` entries. */
  form: Record<string, string>;
}

/**
 * A local HTTP server standing in for Stripe's API: it records what the SDK sends and
 * answers the three calls billing makes with the objects Stripe would return.
 */
export interface FakeStripe {
  url: string;
  calls: StripeCall[];
  /** Answer the next call with a Stripe error instead. */
  failNext(status: number, message: string): void;
  close(): Promise<void>;
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const calls: StripeCall[] = [];
  let failure: { status: number; message: string } | null = null;
  let n = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += String(chunk);
    });
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(raw));
      const path = (req.url ?? '').split('?')[0] ?? '';
      calls.push({ method: req.method ?? '', path, headers: req.headers, form });
      const send = (status: number, body: object) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${++n}` });
        res.end(JSON.stringify(body));
      };
      if (failure) {
        const { status, message } = failure;
        failure = null;
        return send(status, { error: { type: 'invalid_request_error', message } });
      }
      const id = ++n;
      if (req.method === 'POST' && path === '/v1/customers') {
        return send(200, {
          id: `cus_fake${id}`,
          object: 'customer',
          email: form.email ?? null,
          metadata: {},
        });
      }
      if (req.method === 'POST' && path === '/v1/checkout/sessions') {
        return send(200, {
          id: `cs_test_fake${id}`,
          object: 'checkout.session',
          mode: form.mode,
          customer: form.customer,
          client_reference_id: form.client_reference_id,
          url: `https://checkout.stripe.com/c/pay/cs_test_fake${id}`,
        });
      }
      if (req.method === 'POST' && path === '/v1/billing_portal/sessions') {
        return send(200, {
          id: `bps_fake${id}`,
          object: 'billing_portal.session',
          customer: form.customer,
          return_url: form.return_url,
          url: `https://billing.stripe.com/p/session/test_fake${id}`,
        });
      }
      return send(404, { error: { type: 'invalid_request_error', message: `no route ${path}` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    failNext(status, message) {
      failure = { status, message };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
