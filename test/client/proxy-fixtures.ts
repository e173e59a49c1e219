/**
 * What the client tests (test/client, test/mcp) capture through and look at for the capture
 * options `proxy`, `proxy_country` and `geolocation`: the service's PROXIES_FILE naming two
 * loopback proxies (test/helpers/proxies.ts), one that carries traffic and serves `de`, one
 * that refuses the credentials the file gives it; and a page whose title says where the
 * Geolocation API put it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { page } from '../helpers/fixtures.ts';
import { startHttpProxy, type TestProxy } from '../helpers/proxies.ts';

/** The proxy that carries traffic, and the country it serves. */
export const PROXY_ID = 'lo-de';
export const PROXY_COUNTRY = 'de';
/** A proxy whose credentials in the file are wrong: a capture through it is a proxy_error. */
export const LOCKED_PROXY_ID = 'lo-locked';
/** GET /v1/proxies as it answers for this file. */
export const PROXY_LISTING = {
  data: [
    { id: PROXY_ID, countries: [PROXY_COUNTRY] },
    { id: LOCKED_PROXY_ID, countries: [] },
  ],
};

export interface OperatorProxies {
  /** The PROXIES_FILE to start the service with. */
  file: string;
  /** The carrying proxy: its records name each request it carried. */
  proxy: TestProxy;
  /** Whether the carrying proxy carried a request for `url` (an absolute http URL). */
  carried(url: string): boolean;
  close(): Promise<void>;
}

export async function operatorProxies(): Promise<OperatorProxies> {
  const dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-proxies-'));
  const proxy = await startHttpProxy();
  const locked = await startHttpProxy({ auth: { username: 'shot', password: 'right' } });
  const file = path.join(dir, 'proxies.json');
  await writeFile(
    file,
    JSON.stringify([
      { id: PROXY_ID, url: proxy.url, countries: [PROXY_COUNTRY] },
      { id: LOCKED_PROXY_ID, url: locked.url.replace(':right@', ':wrong@') },
    ]),
  );
  return {
    file,
    proxy,
    carried: (url) => proxy.records.some((r) => r.kind === 'request' && r.target === url),
    async close() {
      await proxy.close();
      await locked.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A position, and the title LOCATED_PAGE shows for it. */
export const GEOLOCATION = { latitude: 52.52, longitude: 13.405, accuracy: 25 };
export const LOCATED_TITLE = '52.52,13.405,25';

/**
 * A page that asks for its position once it starts: its title becomes
 * `latitude,longitude,accuracy` (or `denied <code>`), then `#located` appears, which a
 * capture waits for (`wait_for_selector`) and reads back with `metadata`.
 */
export const LOCATED_PAGE = page(
  '<p>where am I</p>',
  `<script>
    const done = (title) => {
      document.title = title;
      const mark = document.createElement('div');
      mark.id = 'located';
      document.body.append(mark);
    };
    navigator.geolocation.getCurrentPosition(
      (p) => done([p.coords.latitude, p.coords.longitude, p.coords.accuracy].join(',')),
      (e) => done('denied ' + e.code),
    );
  </script>`,
);
