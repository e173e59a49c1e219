import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { freePort, PASSWORD, startApp, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { buildWeb, launchBrowser, newContext } from '../helpers/web.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
};

/** A plain static host (a CDN, say) for a build of web/: no API behind it. */
async function serveStatic(dir: string, port: number): Promise<Server> {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file =
      url.pathname === '/'
        ? 'index.html'
        : url.pathname === '/dashboard' || url.pathname.startsWith('/dashboard/')
          ? 'dashboard.html'
          : url.pathname.slice(1);
    const full = path.join(dir, file);
    if (!full.startsWith(dir)) return res.writeHead(404).end();
    try {
      const body = await readFile(full);
      res.writeHead(200, {
        'content-type': TYPES[path.extname(full)] ?? 'application/octet-stream',
      });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

/**
 * The dashboard built with VITE_API_BASE and served from another origin than the API:
 * CORS with credentials for the DASHBOARD_ORIGINS entry, nothing for any other origin.
 */
describe('dashboard served from another origin (browser)', () => {
  let t: TestApp;
  let browser: Browser;
  let buildDir: string;
  let dashboard: Server;
  let stranger: Server;
  let dashboardOrigin: string;
  let strangerOrigin: string;

  before(async () => {
    const [dashboardPort, strangerPort] = [await freePort(), await freePort()];
    dashboardOrigin = `http://127.0.0.1:${dashboardPort}`;
    strangerOrigin = `http://127.0.0.1:${strangerPort}`;
    t = await startApp({ db: 'sqlite', env: { DASHBOARD_ORIGINS: dashboardOrigin } });
    buildDir = await mkdtemp(path.join(tmpdir(), 'shotsmith-web-'));
    const dist = path.join(buildDir, 'dist');
    await buildWeb({ apiBase: t.url, distDir: dist });
    dashboard = await serveStatic(dist, dashboardPort);
    stranger = await serveStatic(dist, strangerPort);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    dashboard?.close();
    stranger?.close();
    await t?.close();
    if (buildDir) await rm(buildDir, { recursive: true, force: true });
  });

  it('signs up, creates and lists keys against the API on its own origin', async () => {
    const { context, problems } = await newContext(browser);
    const page = await context.newPage();
    const apiCalls: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/v1/')) apiCalls.push(new URL(request.url()).origin);
    });
    await page.goto(`${dashboardOrigin}/dashboard/signup`);
    const email = uniqueEmail('xorigin');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    // The cookie-authenticated reads work (credentials cross the origin boundary).
    await page.getByRole('progressbar', { name: 'Monthly quota used' }).waitFor();

    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    await page.getByLabel('Key name').fill('from the CDN');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByLabel('New API key').inputValue();
    assert.match(key, /^sk_live_/);
    await page.locator('tbody tr').filter({ hasText: 'from the CDN' }).waitFor();

    assert.ok(apiCalls.length >= 4);
    assert.deepEqual([...new Set(apiCalls)], [t.url], 'every API call went to the API origin');
    const cookies = await context.cookies(t.url);
    assert.equal(cookies.find((c) => c.name === 'session')?.sameSite, 'Lax');
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('gets nothing from the API on an origin outside DASHBOARD_ORIGINS', async () => {
    const { context } = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${strangerOrigin}/dashboard/signup`);
    // Even the signed-out check cannot be read: the browser blocks the answer.
    await page.locator('.notice').filter({ hasText: 'Could not reach the service' }).waitFor();
    const email = uniqueEmail('stranger');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'Could not reach the service. Check your connection and try again.' })
      .waitFor();
    // The preflight failed, so the signup was never sent.
    const login = await t.fetch('/v1/auth/login', {
      method: 'POST',
      json: { email, password: PASSWORD },
    });
    assert.equal(login.status, 401);
    await context.close();
  });
});
