/**
 * A fixture site with a realm behind HTTP Basic authentication, for isolation tests: one page
 * plants credentials in the browser context's HTTP authentication cache, another asks for the
 * realm with none of its own; every request is logged with its Authorization header and the
 * client port of its connection.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type FixtureSite, page, startSite } from './fixtures.ts';

/** An XHR with user and password: the 401 is answered with them, which caches them. */
const PLANT = page(
  '',
  `<script>
     const xhr = new XMLHttpRequest();
     xhr.open('GET', '/protected?plant', true, 'user', 'secret');
     xhr.onloadend = () => { document.body.dataset.done = String(xhr.status); };
     xhr.send();
   </script>`,
);

/**
 * Asks for the realm with no credentials of its own, by fetch and as an image, after the load
 * event: without cached credentials the challenge stays unanswered (headless Chromium has no
 * one to ask), so the fetch is given up after a while.
 */
const PROBE = page(
  '',
  `<script>
     addEventListener('load', () => {
       const img = new Image();
       img.src = '/protected?img';
       document.body.append(img);
       const controller = new AbortController();
       setTimeout(() => controller.abort(), 1500);
       fetch('/protected?fetch', { signal: controller.signal })
         .then((r) => String(r.status), () => 'aborted')
         .then((status) => { document.body.dataset.done = status; });
     });
   </script>`,
);

/** A page and one subresource, both kept alive by the server. */
const PLAIN = page('<img src="/pixel.svg"><script>document.body.dataset.done = "1";</script>');

const PIXEL = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>';

export interface SeenRequest {
  path: string;
  authorization: string | undefined;
  remotePort: number | undefined;
}

export interface AuthSite extends FixtureSite {
  /** Every request, oldest first; tests empty it between captures. */
  seen: SeenRequest[];
  /** Requests for the protected realm among `seen`. */
  protectedRequests(): SeenRequest[];
}

/** Paths: /plant, /probe, /plain (all finish with `body[data-done]`), /protected. */
export async function startAuthSite(): Promise<AuthSite> {
  const seen: SeenRequest[] = [];
  const good = `Basic ${Buffer.from('user:secret').toString('base64')}`;
  const serve =
    (type: string, body: string) =>
    (req: IncomingMessage, res: ServerResponse): void => {
      seen.push({
        path: req.url ?? '',
        authorization: req.headers.authorization,
        remotePort: req.socket.remotePort,
      });
      res.writeHead(200, { 'content-type': type }).end(body);
    };
  const site = await startSite({
    '/plant': serve('text/html', PLANT),
    '/probe': serve('text/html', PROBE),
    '/plain': serve('text/html', PLAIN),
    '/pixel.svg': serve('image/svg+xml', PIXEL),
    '/protected': (req, res) => {
      if (req.headers.authorization === good) {
        serve('image/svg+xml', PIXEL)(req, res);
        return;
      }
      seen.push({
        path: req.url ?? '',
        authorization: req.headers.authorization,
        remotePort: req.socket.remotePort,
      });
      res
        .writeHead(401, {
          'www-authenticate': 'Basic realm="members"',
          'content-type': 'text/plain',
        })
        .end('who are you?');
    },
  });
  return {
    ...site,
    seen,
    protectedRequests: () => seen.filter((s) => s.path.startsWith('/protected')),
  };
}
