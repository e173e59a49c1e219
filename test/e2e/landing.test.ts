import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page as html, sleep, startSite } from '../helpers/fixtures.ts';
import {
  buildWeb,
  launchBrowser,
  layoutShift,
  newContext,
  settle,
  snapshot,
  unlabelledFields,
} from '../helpers/web.ts';

/** The landing page in Chromium: content, pricing from the plan data, the demo widget. */
describe('landing page (browser)', () => {
  let t: TestApp;
  let site: FixtureSite;
  let browser: Browser;
  let context: BrowserContext;
  let problems: string[];
  let page: Page;

  before(async () => {
    await buildWeb();
    site = await startSite({
      '/': html(
        '<main style="font:48px sans-serif;padding:40px;background:#fde68a">Fixture home</main>',
      ),
      // Slow enough for the progress state to be seen.
      '/slow': async (_req, res) => {
        await sleep(1_500);
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(html('<h1 style="font:40px sans-serif">Slow page</h1>'));
      },
    });
    t = await startApp({ db: 'sqlite', env: { EGRESS_ALLOWLIST: site.hostPort } });
    browser = await launchBrowser();
    ({ context, problems } = await newContext(browser));
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await site?.close();
  });

  it('says what the service does, links to the docs and dashboard, and prices from /v1/plans', async () => {
    // The API is slowed down so the placeholders are painted before the data replaces them.
    await page.route('**/v1/plans', async (route) => {
      await sleep(400);
      await route.continue();
    });
    await page.goto(`${t.url}/`);
    await page.getByRole('heading', { level: 1, name: /Screenshots of any web page/ }).waitFor();
    const plans = page.locator('.plans section.plan');
    await plans.nth(2).waitFor();
    assert.deepEqual(await plans.locator('h3').allTextContents(), ['Demo', 'Free', 'Pro']);
    const pro = page.getByRole('region', { name: 'Pro', exact: true });
    assert.match(await pro.innerText(), /\$9\s+per month/);
    assert.match(await pro.innerText(), /5,000 per month/);
    assert.match(await pro.innerText(), /Up to 3,840×2,160/);
    const free = page.getByRole('region', { name: 'Free', exact: true });
    assert.match(await free.innerText(), /100 per month/);
    assert.match(await free.innerText(), /5 per minute/);
    assert.match(
      await page.getByRole('region', { name: 'Demo', exact: true }).innerText(),
      /5 per day per visitor/,
    );

    assert.ok(await page.locator('main a[href="/docs"]').count());
    assert.ok(await page.locator('a[href="/dashboard"]').count());
    assert.ok(await page.locator('a[href="/dashboard/signup"]').count());
    const curl = await page.getByLabel('Example request with curl').innerText();
    assert.match(curl, new RegExp(`curl -X POST ${t.url}/v1/screenshots`));
    assert.match(curl, /X-API-Key/);

    await page.unroute('**/v1/plans');
    assert.deepEqual(await unlabelledFields(page), []);
    const shift = await layoutShift(page);
    assert.ok(shift < 0.01, `layout shift while loading: ${shift}`);
    await snapshot(page, 'landing');
  });

  it('refuses a private address with a message in words, without using the allowance', async () => {
    await page.getByLabel('Page to capture').fill('http://10.1.2.3/admin');
    await page.getByRole('button', { name: 'Capture', exact: true }).click();
    const alert = page.locator('.demo').getByRole('alert');
    await alert.filter({ hasText: 'cannot be captured' }).waitFor();
    const text = await alert.innerText();
    assert.match(text, /This address cannot be captured: url host 10\.1\.2\.3 is .*private/);
    assert.match(text, /Only public web pages can be captured/);
    assert.doesNotMatch(text, /url_not_allowed|400/);
  });

  it('captures a fixture page: progress while rendering, then the image', async () => {
    const input = page.getByLabel('Page to capture');
    // Typed without a scheme, as people do; the widget adds https:// only when none is given.
    await input.fill(`${site.origin}/slow`);
    await page.getByRole('button', { name: 'Capture', exact: true }).click();
    await page.getByRole('button', { name: 'Capturing…' }).waitFor();
    const status = page.locator('.demo').getByRole('status');
    await status.filter({ hasText: /^Rendering 127\.0\.0\.1:\d+\/slow…$/ }).waitFor();
    // Drawn inside the frame, with the seconds ticking.
    await page
      .locator('.demo-frame .demo-progress-text')
      .filter({ hasText: /Rendering 127\.0\.0\.1:\d+\/slow… \d+ s/ })
      .waitFor();
    assert.equal(await page.locator('.demo-frame').getAttribute('aria-busy'), 'true');

    const image = page.getByRole('img', { name: `Screenshot of ${site.hostPort}/slow` });
    await image.waitFor({ timeout: 30_000 });
    await status.filter({ hasText: 'ready.' }).waitFor();
    assert.match(await page.locator('.demo-caption').innerText(), /^Rendered in \d+\.\d s · /);
    await settle(page);
    const size = await image.evaluate((img: HTMLImageElement) => [
      img.naturalWidth,
      img.naturalHeight,
    ]);
    assert.deepEqual(size, [1280, 720]);
    assert.match(await page.locator('.demo-caption').innerText(), /kept until/);
    await snapshot(page, 'landing-demo-result');
  });

  it('after the daily allowance, says so and when it resets', async () => {
    const input = page.getByLabel('Page to capture');
    const button = page.getByRole('button', { name: 'Capture', exact: true });
    const capture = async () => {
      const answered = page.waitForResponse((r) => r.url().endsWith('/demo/screenshot'));
      await button.click();
      return (await answered).status();
    };
    // One capture is used; four more (cache hits count too) reach the limit of five.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      await input.fill(`${site.origin}/`);
      statuses.push(await capture());
      await button.waitFor();
    }
    assert.deepEqual(statuses, [201, 201, 201, 201]);
    assert.equal(await capture(), 429);
    const alert = page.locator('.demo').getByRole('alert');
    await alert.filter({ hasText: 'demo captures' }).waitFor();
    const text = await alert.innerText();
    assert.match(
      text,
      /You have used today's 5 demo captures\. The demo resets (in \d+ \w+|tomorrow) \(/,
    );
    assert.ok(await alert.getByRole('link', { name: 'Create a free account' }).count());
    // The last image stays on screen.
    assert.equal(await page.locator('.demo-image').count(), 1);
    await snapshot(page, 'landing-demo-limit');
  });

  it('loaded with no script errors and no Content-Security-Policy violations', () => {
    assert.deepEqual(problems, []);
  });
});
