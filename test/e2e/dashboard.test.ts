import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { BOUNDS } from '../../src/domain/bounds.ts';
import { S3RVER_CREDENTIAL, startBucket, type TestBucket } from '../client/bucket-fixtures.ts';
import { PASSWORD, startApp, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { type FixtureSite, page as html, sleep, startSite } from '../helpers/fixtures.ts';
import {
  buildWeb,
  DESKTOP,
  launchBrowser,
  layoutShift,
  newContext,
  PHONE,
  settle,
  snapshot,
  unlabelledFields,
} from '../helpers/web.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhooks.ts';

/**
 * The dashboard in Chromium against the real app: one new user's whole journey, in order
 * (each step builds on the previous one), then the login errors and a keyboard-only signup
 * in fresh contexts. The user's own bucket is s3rver on loopback (bucket-fixtures.ts), which
 * EGRESS_ALLOWLIST lets the service reach.
 */
describe('dashboard (browser)', () => {
  let t: TestApp;
  let site: FixtureSite;
  let browser: Browser;
  let context: BrowserContext;
  let problems: string[];
  let page: Page;
  const email = uniqueEmail('e2e');
  let apiKey = '';
  let signingSecret = '';
  let hooks: WebhookReceiver;
  let bucket: TestBucket;

  before(async () => {
    await buildWeb();
    site = await startSite({
      '/': html('<main style="font:48px sans-serif;padding:40px;background:#bfdbfe">Blue</main>'),
      '/pro': html('<main style="font:48px sans-serif;padding:40px;background:#bbf7d0">Pro</main>'),
    });
    hooks = await startWebhookReceiver();
    bucket = await startBucket();
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: `${site.hostPort},${hooks.hostPort},${bucket.hostPort}` },
    });
    browser = await launchBrowser();
    ({ context, problems } = await newContext(browser, { origin: t.url }));
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await site?.close();
    await hooks?.close();
    await bucket?.close();
  });

  const heading = (name: string) => page.getByRole('heading', { level: 1, name, exact: true });
  const nav = (name: string) =>
    page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true });
  const notice = (text: string | RegExp) => page.locator('.notice').filter({ hasText: text });

  it('a new user signs up and lands on the overview', async () => {
    await page.goto(`${t.url}/dashboard`);
    // Signed out: the login form, at its own address.
    await heading('Log in').waitFor();
    assert.equal(new URL(page.url()).pathname, '/dashboard/login');
    await snapshot(page, 'dashboard-login');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await heading('Create your account').waitFor();
    assert.equal(new URL(page.url()).pathname, '/dashboard/signup');
    assert.deepEqual(await unlabelledFields(page), []);
    await snapshot(page, 'dashboard-signup');

    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading('Overview').waitFor();
    assert.equal(new URL(page.url()).pathname, '/dashboard');
    const header = page.locator('.app-header');
    assert.match(await header.innerText(), new RegExp(email.replace(/[.+]/g, '\\$&')));
    assert.match(await header.locator('.badge').innerText(), /^Free/);
    // The overview loads its numbers after the page appears.
    await page.getByRole('progressbar', { name: 'Monthly quota used' }).waitFor();
    assert.match(await page.locator('.stat').first().innerText(), /0\s+of 100/);
  });

  it('creates a named key, shown once, and copies it', async () => {
    await nav('API keys').click();
    await heading('API keys').waitFor();
    await page.locator('.empty').filter({ hasText: 'No keys yet' }).waitFor();
    await page.getByLabel('Key name').fill('laptop');
    await page.getByRole('button', { name: 'Create key' }).click();

    const reveal = page.getByLabel('New API key');
    await reveal.waitFor();
    apiKey = await reveal.inputValue();
    assert.match(apiKey, /^sk_live_[A-Za-z0-9]{32,}$/);
    assert.ok(await page.getByText('You will not see this again.').isVisible());
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), apiKey);
    signingSecret = await page.getByLabel("New key's signing secret").inputValue();
    assert.match(signingSecret, /^sig_live_[A-Za-z0-9]{43}$/);

    const row = page.locator('tbody tr').filter({ hasText: 'laptop' });
    await row.waitFor();
    assert.match(await row.innerText(), new RegExp(`${apiKey.slice(0, 12)}…`));
    assert.match(await row.innerText(), /Never/);
    assert.equal(await row.locator('code').innerText(), `${apiKey.slice(0, 12)}…`);
    assert.deepEqual(await unlabelledFields(page), []);
    await snapshot(page, 'dashboard-keys-new');
  });

  it('runs a capture in the playground with that key and shows it as curl', async () => {
    await page.getByRole('link', { name: 'Try it in the playground' }).click();
    await heading('Playground').waitFor();
    // The key created in this tab is filled in.
    assert.equal(await page.getByLabel('API key').inputValue(), apiKey);
    await page.getByLabel('Page URL').fill(`${site.origin}/`);
    await page.getByLabel('Width', { exact: true }).fill('800');
    await page.getByLabel('Height', { exact: true }).fill('600');

    const curl = await page.getByLabel('The request as a curl command').innerText();
    assert.match(curl, new RegExp(`^curl -X POST ${t.url}/v1/screenshots`));
    assert.ok(curl.includes(`-H "X-API-Key: ${apiKey.slice(0, 12)}…"`), curl);
    const body = JSON.parse(curl.slice(curl.indexOf("-d '") + 4, curl.lastIndexOf("'")));
    assert.deepEqual(body, { url: `${site.origin}/`, format: 'png', width: 800, height: 600 });
    // The delivered size: one side alone, then both with the fit they ask for.
    const bodyOf = async () => {
      const text = await page.getByLabel('The request as a curl command').innerText();
      return JSON.parse(text.slice(text.indexOf("-d '") + 4, text.lastIndexOf("'")));
    };
    await page.getByLabel('Image width').fill('400');
    assert.deepEqual(await bodyOf(), { ...body, image_width: 400 });
    await page.getByLabel('Image height').fill('300');
    await page.getByLabel('Fit').selectOption('contain');
    assert.deepEqual(await bodyOf(), {
      ...body,
      image_width: 400,
      image_height: 300,
      image_fit: 'contain',
    });
    await page.getByLabel('Image width').fill('');
    await page.getByLabel('Image height').fill('');
    assert.deepEqual(await bodyOf(), body);
    // A document instead of the URL, with its base; back to the URL after.
    const { url: _url, ...rest } = body;
    await page.getByLabel('Capture', { exact: true }).selectOption('markdown');
    await page.getByLabel('Markdown document').fill('# Notes');
    await page.getByLabel('Base URL (optional)').fill(`${site.origin}/docs/`);
    assert.deepEqual(await bodyOf(), {
      markdown: '# Notes',
      base_url: `${site.origin}/docs/`,
      ...rest,
    });
    await page.getByLabel('Capture', { exact: true }).selectOption('html');
    assert.deepEqual(await bodyOf(), {
      html: '# Notes',
      base_url: `${site.origin}/docs/`,
      ...rest,
    });
    await page.getByLabel('Capture', { exact: true }).selectOption('url');
    assert.deepEqual(await bodyOf(), body);
    // The page-context controls add their fields, and only when filled in.
    await page.getByText('Page context').click();
    await page.getByLabel('Locale').fill('de-DE');
    await page.getByLabel('Print style sheets (media type print)').check();
    const withContext = await page.getByLabel('The request as a curl command').innerText();
    assert.deepEqual(
      JSON.parse(withContext.slice(withContext.indexOf("-d '") + 4, withContext.lastIndexOf("'"))),
      { ...body, locale: 'de-DE', media_type: 'print' },
    );
    await page.getByLabel('Locale').fill('');
    await page.getByLabel('Print style sheets (media type print)').uncheck();
    // A position takes both coordinates; proxies are Pro, so Free has no field for them.
    await page.getByLabel('Latitude').fill('52.52');
    assert.deepEqual(await bodyOf(), body, 'a latitude alone is no position');
    await page.getByLabel('Longitude').fill('13.405');
    assert.deepEqual(await bodyOf(), {
      ...body,
      geolocation: { latitude: 52.52, longitude: 13.405 },
    });
    await page.getByLabel('Latitude').fill('91');
    assert.deepEqual(await bodyOf(), body, 'a latitude past the pole is no position');
    await page.getByLabel('Latitude').fill('');
    await page.getByLabel('Longitude').fill('');
    assert.equal(await page.getByLabel('Proxy', { exact: true }).count(), 0);
    await page.getByText('Page actions').click();
    await page.getByLabel('Click (selector)').fill('#accept');
    await page.getByLabel('Fail when the page answers 4xx or 5xx').check();
    await page.getByLabel('Clip region (x, y, w, h)').fill('0, 10, 200, 100');
    await page.getByLabel('Page metadata in the answer (title, description, Open Graph)').check();
    await page.getByLabel('Visible text').check();
    await page.getByLabel('HTML (the DOM)').check();
    const withActions = await page.getByLabel('The request as a curl command').innerText();
    assert.deepEqual(
      JSON.parse(withActions.slice(withActions.indexOf("-d '") + 4, withActions.lastIndexOf("'"))),
      {
        ...body,
        click: '#accept',
        fail_on_http_error: true,
        clip: { x: 0, y: 10, width: 200, height: 100 },
        metadata: true,
        content: ['html', 'text'],
      },
    );
    await page.getByLabel('Visible text').uncheck();
    await page.getByLabel('HTML (the DOM)').uncheck();
    await page.getByLabel('Page metadata in the answer (title, description, Open Graph)').uncheck();
    await page.getByLabel('Click (selector)').fill('');
    await page.getByLabel('Fail when the page answers 4xx or 5xx').uncheck();
    await page.getByLabel('Clip region (x, y, w, h)').fill('');
    await page.getByText('Requests', { exact: true }).click();
    await page.getByLabel('Block URLs (one pattern per line)').fill('*.gif*\n*/ads/*');
    await page.getByLabel('font', { exact: true }).check();
    await page.getByLabel('Headers (Name: value per line)').fill('X-Preview: 1');
    await page.getByLabel('Cookies (name=value per line)').fill('sid=abc');
    await page.getByLabel('HTTP auth user').fill('ann');
    await page.getByLabel('HTTP auth password').fill('pw');
    await page.getByLabel('Block ads').check();
    await page.getByLabel('Block trackers').check();
    await page.getByLabel('Dismiss cookie banners').check();
    const withRequests = await page.getByLabel('The request as a curl command').innerText();
    assert.deepEqual(
      JSON.parse(
        withRequests.slice(withRequests.indexOf("-d '") + 4, withRequests.lastIndexOf("'")),
      ),
      {
        ...body,
        block_requests: ['*.gif*', '*/ads/*'],
        block_resources: ['font'],
        headers: { 'X-Preview': '1' },
        cookies: [{ name: 'sid', value: 'abc' }],
        http_auth: { username: 'ann', password: 'pw' },
        block_ads: true,
        block_trackers: true,
        block_cookie_banners: true,
      },
    );
    await page.getByText('Device', { exact: true }).click();
    await page.getByLabel('Device preset').selectOption('iphone-15');
    await page.getByLabel('Landscape').check();
    const withDevice = await page.getByLabel('The request as a curl command').innerText();
    const { width: _w, height: _h, ...withoutSize } = body;
    assert.deepEqual(
      JSON.parse(withDevice.slice(withDevice.indexOf("-d '") + 4, withDevice.lastIndexOf("'"))),
      {
        ...withoutSize,
        device: 'iphone-15',
        landscape: true,
        block_requests: ['*.gif*', '*/ads/*'],
        block_resources: ['font'],
        headers: { 'X-Preview': '1' },
        cookies: [{ name: 'sid', value: 'abc' }],
        http_auth: { username: 'ann', password: 'pw' },
        block_ads: true,
        block_trackers: true,
        block_cookie_banners: true,
      },
    );
    await page.getByLabel('Device preset').selectOption('');
    await page.getByLabel('Landscape').uncheck();
    await page.getByLabel('Block ads').uncheck();
    await page.getByLabel('Block trackers').uncheck();
    await page.getByLabel('Dismiss cookie banners').uncheck();
    await page.getByLabel('Block URLs (one pattern per line)').fill('');
    await page.getByLabel('font', { exact: true }).uncheck();
    await page.getByLabel('Headers (Name: value per line)').fill('');
    await page.getByLabel('Cookies (name=value per line)').fill('');
    await page.getByLabel('HTTP auth user').fill('');
    await page.getByLabel('HTTP auth password').fill('');
    assert.ok(!curl.includes(apiKey), 'the full key is not displayed');
    await page.getByRole('button', { name: 'Copy command' }).click();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.ok(copied.includes(`X-API-Key: ${apiKey}`), 'the copied command has the real key');

    await page.getByRole('button', { name: 'Run capture' }).click();
    const image = page.getByRole('img', { name: /^Capture result, 800×600 PNG/ });
    await image.waitFor({ timeout: 30_000 });
    await settle(page);
    assert.equal(await image.evaluate((img: HTMLImageElement) => img.naturalWidth), 800);
    const facts = await page.locator('.facts').innerText();
    assert.match(facts, /1 of 100 used this month/);
    assert.match(facts, /Rendered/);
    assert.deepEqual(await unlabelledFields(page), []);
    await snapshot(page, 'dashboard-playground');
  });

  it('sees usage go up on the overview, with today in the chart', async () => {
    await nav('Overview').click();
    await heading('Overview').waitFor();
    const meter = page.getByRole('progressbar', { name: 'Monthly quota used' });
    await meter.waitFor();
    assert.equal(await meter.getAttribute('aria-valuenow'), '1');
    assert.equal(await meter.getAttribute('aria-valuemax'), '100');
    assert.match(await page.locator('.stat').first().innerText(), /1\s+of 100/);
    assert.match(await page.locator('.stat').nth(1).innerText(), /5 per minute/);
    assert.match(await page.locator('.stat').first().innerText(), /resets on/);
    const today = page.locator('.chart-bar.is-today');
    assert.match((await today.getAttribute('title')) ?? '', /: 1$/);
    assert.match(
      (await page.locator('.chart-bars').getAttribute('aria-label')) ?? '',
      /^1 screenshot this period/,
    );
    await snapshot(page, 'dashboard-overview');
  });

  it('builds a signed render link that renders, and replaces the signing secret', async () => {
    await nav('API keys').click();
    await heading('API keys').waitFor();
    const builder = page.getByRole('region', { name: 'Render link builder' });
    await builder.waitFor();
    // A reload forgot the secret: it is pasted in, and only used in the page.
    await builder.getByLabel('Signing secret').fill(signingSecret);
    await builder.getByLabel('Page URL').fill(`${site.origin}/`);
    await builder.getByLabel('Width').fill('320');
    await builder.getByLabel('Height').fill('200');
    await builder.getByRole('button', { name: 'Build link' }).click();
    const linkField = builder.getByLabel('Signed render link');
    await linkField.waitFor();
    const link = await linkField.inputValue();
    assert.match(link, new RegExp(`^${t.url}/v1/render\\?url=`));
    const res = await fetch(link, { redirect: 'manual' });
    assert.equal(res.status, 302, await res.clone().text());
    const image = await fetch(res.headers.get('location') ?? '');
    assert.equal(image.headers.get('content-type'), 'image/png');
    assert.deepEqual(await unlabelledFields(page), []);
    await snapshot(page, 'dashboard-keys-link-builder');

    const row = page.locator('tbody tr').filter({ hasText: 'laptop' });
    await row.getByRole('button', { name: 'New signing secret for laptop' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replace the signing secret?' });
    await dialog.getByRole('button', { name: 'Replace secret' }).click();
    const revealed = page.getByRole('region', { name: /^New signing secret for/ });
    const fresh = await revealed.getByLabel('Signing secret').inputValue();
    assert.match(fresh, /^sig_live_[A-Za-z0-9]{43}$/);
    assert.notEqual(fresh, signingSecret);
    assert.equal(
      (await fetch(link, { redirect: 'manual' })).status,
      401,
      'the old link is refused',
    );
    // The builder knows the new secret in this tab: a link without pasting renders again.
    await builder.getByLabel('Signing secret').fill('');
    await builder.getByRole('button', { name: 'Build link' }).click();
    let renewed = link;
    for (let i = 0; i < 100 && renewed === link; i++) {
      await sleep(50);
      renewed = await linkField.inputValue().catch(() => link);
    }
    assert.notEqual(renewed, link);
    assert.equal((await fetch(renewed, { redirect: 'manual' })).status, 302);
    await revealed.getByRole('button', { name: 'I have stored it, hide it' }).click();
  });

  it('explains that screenshot history is a Pro feature on Free', async () => {
    await nav('Screenshots').click();
    await heading('Screenshots').waitFor();
    await page.getByRole('heading', { name: 'Screenshot history is a Pro feature' }).waitFor();
    await snapshot(page, 'dashboard-screenshots-free');
  });

  it('explains that storage destinations are a Pro feature on Free', async () => {
    await nav('Storage').click();
    await heading('Storage').waitFor();
    await page.getByRole('heading', { name: 'Storage destinations are a Pro feature' }).waitFor();
    // The Pro plan's number, read from the plans.
    await page.getByText(/On Pro you keep up to 5 buckets/).waitFor();
    assert.equal(await page.getByLabel('Secret access key').count(), 0, 'no form on Free');
    await snapshot(page, 'dashboard-storage-free');
    // Nor a storage section in the playground.
    await nav('Playground').click();
    await heading('Playground').waitFor();
    assert.equal(
      await page
        .locator('summary')
        .filter({ hasText: /^Storage$/ })
        .count(),
      0,
    );
  });

  it('upgrades through the local checkout and sees Pro', async () => {
    await nav('Billing').click();
    await heading('Billing').waitFor();
    const facts = page.locator('.facts');
    await facts.filter({ hasText: 'No subscription' }).waitFor();
    await page.locator('.comparison').waitFor();
    await snapshot(page, 'dashboard-billing-free');

    await page.getByRole('button', { name: /^Upgrade to Pro \(\$9 per month\)$/ }).click();
    await page.waitForURL(/\/billing\/local\/checkout\//);
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL(/\/dashboard$/);
    await notice('You are on Pro now.').waitFor({ timeout: 30_000 });
    assert.match(await page.locator('.app-header .badge').innerText(), /^Pro/);
    // The address no longer carries ?billing=success, so a reload does not repeat it.
    assert.equal(new URL(page.url()).search, '');
    await snapshot(page, 'dashboard-upgraded');

    await nav('Billing').click();
    await facts.filter({ hasText: 'Active' }).waitFor();
    assert.match(await facts.innerText(), /Renews on\s+\w{3} \d+, \d{4}/);
    assert.ok(await page.getByRole('button', { name: 'Manage subscription' }).isVisible());
    assert.equal(await page.getByRole('button', { name: /Upgrade to Pro/ }).count(), 0);
    await snapshot(page, 'dashboard-billing-pro');
  });

  it('captures as Pro (key pasted after the round trip) and sees the history', async () => {
    await nav('Playground').click();
    await heading('Playground').waitFor();
    // The checkout left the page, and the dashboard keeps keys in memory only.
    assert.equal(await page.getByLabel('API key').inputValue(), '');
    await page.getByRole('button', { name: 'Run capture' }).click();
    await notice('Paste an API key first').waitFor();
    await page.getByLabel('API key').fill(apiKey);
    await page.getByLabel('Page URL').fill(`${site.origin}/pro`);
    // Pro shows its own options.
    await page.getByText('Page context').click();
    await page.getByLabel('Proxy', { exact: true }).fill(' de-1 ');
    await page.getByLabel('Proxy country').fill('de');
    const curl = await page.getByLabel('The request as a curl command').innerText();
    const withProxy = JSON.parse(curl.slice(curl.indexOf("-d '") + 4, curl.lastIndexOf("'")));
    assert.deepEqual([withProxy.proxy, withProxy.proxy_country], ['de-1', 'de']);
    // This service has no proxies: the capture below goes out directly.
    await page.getByLabel('Proxy', { exact: true }).fill('');
    await page.getByLabel('Proxy country').fill('');
    await page.getByLabel('Device scale').selectOption('2');
    await page.getByRole('button', { name: 'Run capture' }).click();
    await page.getByRole('img', { name: /^Capture result, 2560×1600 PNG/ }).waitFor({
      timeout: 30_000,
    });
    // The playground's capture, the first render link's render and this one: the renewed
    // link asks for the same capture, answered from the cache, which a link gets free.
    assert.match(await page.locator('.facts').innerText(), /3 of 5,000 used this month/);

    await nav('Screenshots').click();
    await heading('Screenshots').waitFor();
    const card = page.locator('.shot').filter({ hasText: `${site.hostPort}/pro` });
    await card.waitFor();
    assert.equal(await page.locator('.shot').count(), 1);
    const text = await card.innerText();
    // The image size in pixels: the 1280×800 viewport at twice the density.
    assert.match(text, /PNG · 2560×1600 px · 2× scale/);
    assert.match(text, /expires in 30 days/);
    const thumb = card.getByRole('img', { name: `Screenshot of ${site.hostPort}/pro` });
    await settle(page);
    assert.ok((await thumb.evaluate((img: HTMLImageElement) => img.naturalWidth)) > 0);
    await snapshot(page, 'dashboard-screenshots-pro');
  });

  it('deletes a screenshot after confirming, and its image is gone', async () => {
    const card = page.locator('.shot').filter({ hasText: `${site.hostPort}/pro` });
    const imageUrl = await card.getByRole('img').getAttribute('src');
    assert.ok(imageUrl);
    assert.equal((await fetch(imageUrl)).status, 200);

    await card.getByRole('button', { name: /^Delete/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this screenshot?' });
    await dialog.waitFor();
    // Cancel is focused first, so a stray Enter destroys nothing.
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Cancel');
    await snapshot(page, 'dashboard-screenshot-delete-dialog');
    await dialog.getByRole('button', { name: 'Delete screenshot' }).click();
    await notice(/The screenshot of .* is deleted/).waitFor();
    await page.locator('.empty').filter({ hasText: 'No screenshots yet' }).waitFor();
    assert.equal((await fetch(imageUrl)).status, 404);
  });

  it('adds a storage destination after its test write, and tests it again', async () => {
    await nav('Storage').click();
    await heading('Storage').waitFor();
    await page.locator('.empty').filter({ hasText: 'No destinations yet' }).waitFor();
    const form = page.getByRole('region', { name: 'Add a destination' });
    await form.getByLabel('Name', { exact: true }).fill('e2e bucket');
    await form.getByLabel('Endpoint (optional)').fill(bucket.s3.endpoint);
    await form.getByLabel('Region').fill('us-east-1');
    await form.getByLabel('Bucket', { exact: true }).fill('no-such-bucket-here');
    await form.getByLabel('Prefix (optional)').fill('e2e');
    await form.getByLabel('Access key id').fill(S3RVER_CREDENTIAL);
    await form.getByLabel('Secret access key').fill(S3RVER_CREDENTIAL);
    // An endpoint makes path-style addressing the default, as the service would choose.
    assert.equal(await form.getByLabel('Path-style URLs (endpoint/bucket/key)').isChecked(), true);
    assert.equal(await form.getByLabel('Object ACL').inputValue(), 'private');
    // The bucket's own refusal, in the service's words; nothing is saved.
    await form.getByRole('button', { name: 'Test and add' }).click();
    await notice(/^The test write into the bucket failed: NoSuchBucket/).waitFor();
    await form.getByLabel('Bucket', { exact: true }).fill(bucket.s3.bucket);
    await form.getByRole('button', { name: 'Test and add' }).click();
    await notice(/The destination “e2e bucket” is added/).waitFor();
    assert.equal(await form.getByLabel('Secret access key').inputValue(), '', 'the secret is gone');
    const row = page.locator('tbody tr').filter({ hasText: 'e2e bucket' });
    await row.waitFor();
    const text = await row.innerText();
    for (const part of [bucket.s3.bucket, bucket.s3.endpoint, 'e2e/']) {
      assert.ok(text.includes(part), `${part} in ${text}`);
    }
    // Tested when it was added.
    assert.ok(Date.parse((await row.locator('time').getAttribute('datetime')) ?? '') > 0);
    assert.ok(!text.includes(S3RVER_CREDENTIAL), 'no credential shown');
    assert.deepEqual(await unlabelledFields(page), []);
    await snapshot(page, 'dashboard-storage');

    await row.getByRole('button', { name: 'Test e2e bucket' }).click();
    await notice(/The test write into “e2e bucket” succeeded/).waitFor();
  });

  it('captures into the destination from the playground, hosted and not', async () => {
    await nav('Playground').click();
    await heading('Playground').waitFor();
    await page.getByLabel('API key').fill(apiKey);
    await page.getByLabel('Page URL').fill(`${site.origin}/`);
    await page.getByLabel('Width', { exact: true }).fill('320');
    await page.getByLabel('Height', { exact: true }).fill('200');
    await page
      .locator('summary')
      .filter({ hasText: /^Storage$/ })
      .click();
    const select = page.getByLabel('Storage destination');
    await select.locator('option', { hasText: 'e2e bucket' }).waitFor({ state: 'attached' });
    await select.selectOption({ label: `e2e bucket (${bucket.s3.bucket})` });
    const destination = await select.inputValue();
    assert.match(destination, /^dst_[0-9A-Za-z]{24}$/);
    await page.getByLabel('Path template').fill(' playground/{host}/{id}.{ext} ');
    const bodyOf = async () => {
      const curl = await page.getByLabel('The request as a curl command').innerText();
      return JSON.parse(curl.slice(curl.indexOf("-d '") + 4, curl.lastIndexOf("'")));
    };
    const path = 'playground/{host}/{id}.{ext}';
    assert.deepEqual((await bodyOf()).storage, { destination, path });
    const keep = page.getByLabel(
      'Keep a copy here too (an image URL, kept as your plan keeps images)',
    );
    await keep.uncheck();
    assert.deepEqual((await bodyOf()).storage, { destination, path, hosted: false });
    await keep.check();

    await page.getByRole('button', { name: 'Run capture' }).click();
    await page.getByRole('img', { name: /^Capture result, 320×200 PNG/ }).waitFor({
      timeout: 30_000,
    });
    // The response body, folded in the result card.
    const shown = page.getByRole('region', { name: 'Result' }).locator('pre.code code');
    const answer = JSON.parse((await shown.textContent()) ?? '{}');
    const key = String(answer.storage?.key);
    assert.match(key, /^e2e\/playground\/127\.0\.0\.1\/[^/]+\.png$/);
    const facts = await page.locator('.facts').innerText();
    assert.ok(facts.includes(key), facts);
    // The object landed in the bucket, the same bytes as the hosted image.
    const object = await bucket.object(key);
    assert.equal(object.type, 'image/png');
    const hosted = Buffer.from(await (await fetch(answer.image_url)).arrayBuffer());
    assert.deepEqual(object.bytes, hosted);
    await snapshot(page, 'dashboard-playground-storage');

    // Not kept here: no image to show, the object in the bucket all the same.
    await keep.uncheck();
    await page.getByLabel('Page URL').fill(`${site.origin}/pro`);
    await page.getByRole('button', { name: 'Run capture' }).click();
    await notice(/No copy is kept here/).waitFor({ timeout: 30_000 });
    const only = JSON.parse((await shown.textContent()) ?? '{}');
    assert.equal(only.image_url, undefined);
    assert.equal((await bucket.object(String(only.storage?.key))).type, 'image/png');
    assert.equal(await page.getByRole('img', { name: /^Capture result/ }).count(), 0);
  });

  it('deletes the destination after confirming; what it wrote stays in the bucket', async () => {
    await nav('Storage').click();
    await heading('Storage').waitFor();
    const row = page.locator('tbody tr').filter({ hasText: 'e2e bucket' });
    await row.getByRole('button', { name: 'Delete e2e bucket' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this destination?' });
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /objects already in the bucket stay there/);
    await dialog.getByRole('button', { name: 'Delete destination' }).click();
    await notice(/The destination “e2e bucket” is deleted/).waitFor();
    await page.locator('.empty').filter({ hasText: 'No destinations yet' }).waitFor();
    assert.equal((await bucket.keys('e2e/playground/')).length, 2);
  });

  it('runs a batch of URLs in the playground (Pro) and follows its jobs', async () => {
    await nav('Playground').click();
    await heading('Playground').waitFor();
    await page.getByLabel('API key').fill(apiKey);
    await page.getByLabel('Capture', { exact: true }).selectOption('batch');
    await page
      .getByLabel('URLs (one a line, at most 50)')
      .fill(`${site.origin}/\n\n${site.origin}/pro`);
    await page.getByLabel('Width', { exact: true }).fill('320');
    await page.getByLabel('Height', { exact: true }).fill('200');
    const curl = await page.getByLabel('The request as a curl command').innerText();
    assert.match(curl, new RegExp(`^curl -X POST ${t.url}/v1/screenshots/batch`));
    const body = JSON.parse(curl.slice(curl.indexOf("-d '") + 4, curl.lastIndexOf("'")));
    assert.deepEqual(
      body.requests.map((r: { url: string; width: number }) => [r.url, r.width]),
      [
        [`${site.origin}/`, 320],
        [`${site.origin}/pro`, 320],
      ],
    );
    await page.getByRole('button', { name: 'Run capture' }).click();
    await page.getByText(/2 of 2 ended\.$/).waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('.batch-jobs li').filter({ hasText: 'succeeded' }).count(), 2);
    await page.getByLabel('Capture', { exact: true }).selectOption('url');
  });

  it('shows a webhook delivery with its attempts, resends it, and rotates the secret', async () => {
    const res = await t.fetch('/v1/screenshots', {
      method: 'POST',
      headers: { 'x-api-key': apiKey },
      json: {
        url: `${site.origin}/`,
        width: 320,
        height: 200,
        async: true,
        webhook_url: hooks.url,
      },
    });
    assert.equal(res.status, 202, await res.clone().text());
    await hooks.waitFor(1);
    await nav('Webhooks').click();
    await heading('Webhooks').waitFor();
    const secret = await page.getByLabel('Webhook signing secret').inputValue();
    assert.match(secret, /^whsec_/);
    const row = page.locator('tbody tr').filter({ hasText: 'screenshot.succeeded' });
    await row.waitFor();
    for (let i = 0; i < 50 && !/Delivered/.test(await row.innerText()); i++) {
      await sleep(100);
      await page.getByRole('button', { name: 'Refresh' }).click();
    }
    assert.match(await row.innerText(), /Delivered/);
    await row.getByRole('button', { name: /^Attempts of msg_/ }).click();
    await page
      .getByRole('list', { name: /^Attempts of msg_/ })
      .getByText('HTTP 200')
      .waitFor();
    assert.deepEqual(await unlabelledFields(page), []);
    await snapshot(page, 'dashboard-webhooks');
    await row.getByRole('button', { name: /^Resend msg_/ }).click();
    await notice(/is queued to be sent again/).waitFor();
    const [first, second] = await hooks.waitFor(2);
    assert.equal(second?.headers['webhook-id'], first?.headers['webhook-id']);

    await page.getByRole('button', { name: 'Rotate' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the webhook secret?' });
    await dialog.getByRole('button', { name: 'Rotate secret' }).click();
    await notice(/The secret is replaced/).waitFor();
    const rotated = await page.getByLabel('Webhook signing secret').inputValue();
    assert.match(rotated, /^whsec_/);
    assert.notEqual(rotated, secret);
  });

  it('revokes the key after confirming, and the API refuses it', async () => {
    assert.equal((await t.fetch('/v1/usage', { headers: { 'x-api-key': apiKey } })).status, 200);
    await nav('API keys').click();
    await heading('API keys').waitFor();
    const row = page.locator('tbody tr').filter({ hasText: 'laptop' });
    await row.waitFor();
    // Used twice by now.
    assert.doesNotMatch(await row.innerText(), /Never/);
    await row.getByRole('button', { name: 'Revoke laptop' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /stops working at once/);
    // Escape cancels.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await row.count(), 1);

    await row.getByRole('button', { name: 'Revoke laptop' }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await notice(/The key “laptop” is revoked/).waitFor();
    await page.locator('.empty').filter({ hasText: 'No keys yet' }).waitFor();

    const refused = await t.fetch('/v1/usage', { headers: { 'x-api-key': apiKey } });
    assert.equal(refused.status, 401);
    assert.deepEqual(await refused.json(), { error: 'unauthorized' });

    // The playground says so in words too.
    await nav('Playground').click();
    await page.getByLabel('API key').fill(apiKey);
    await page.getByRole('button', { name: 'Run capture' }).click();
    await notice('The API key was refused: it is mistyped, or it has been revoked.').waitFor();
  });

  it('reads a handful of times per page, far inside the dashboard reads per minute', async () => {
    // Every GET by session draws on the account's dashboard reads (docs/api.md, "Dashboard
    // reads"), answered with X-RateLimit-* like every limited request; public reads (plans,
    // devices) carry no such header.
    const limit = String(BOUNDS.rates.otherEndpointsPerMinute);
    const reads: Array<{ path: string; status: number; remaining: number }> = [];
    const seen = (res: Response) => {
      const url = new URL(res.url());
      if (res.request().method() !== 'GET' || !url.pathname.startsWith('/v1/')) return;
      const headers = res.headers();
      if (headers['x-ratelimit-limit'] !== limit) return;
      reads.push({
        path: url.pathname,
        status: res.status(),
        remaining: Number(headers['x-ratelimit-remaining']),
      });
    };
    page.on('response', seen);
    try {
      for (const path of [
        '/dashboard',
        '/dashboard/playground',
        '/dashboard/keys',
        '/dashboard/screenshots',
        '/dashboard/monitors',
        '/dashboard/storage',
        '/dashboard/webhooks',
        '/dashboard/billing',
      ]) {
        const before = reads.length;
        await page.goto(`${t.url}${path}`);
        await page.locator('h1.page-title').waitFor();
        await page.waitForLoadState('networkidle');
        const made = reads.slice(before);
        // The app's own check of the session, and the page's one or two reads.
        assert.ok(made.length >= 1 && made.length <= 4, `${path}: ${JSON.stringify(made)}`);
        assert.deepEqual(
          made.filter((r) => r.status === 429),
          [],
          path,
        );
      }
    } finally {
      page.off('response', seen);
    }
    const lowest = Math.min(...reads.map((r) => r.remaining));
    assert.ok(
      lowest > Number(limit) - 60,
      `every page once used ${Number(limit) - lowest} of ${limit} reads a minute`,
    );
  });

  it('logs out', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await heading('Log in').waitFor();
    await notice('You are logged out.').waitFor();
    assert.equal((await page.request.get(`${t.url}/v1/auth/me`)).status(), 401);
  });

  it('shows wrong-password and missing-field errors on the login form', async () => {
    const fresh = await newContext(browser);
    const login = await fresh.context.newPage();
    try {
      await login.goto(`${t.url}/dashboard/login`);
      await login.getByRole('heading', { name: 'Log in' }).waitFor();
      await login.getByRole('button', { name: 'Log in' }).click();
      assert.equal(await login.getByText('Enter your email address.').count(), 1);
      assert.equal(await login.getByText('Enter your password.').count(), 1);
      assert.equal(await login.getByLabel('Email').getAttribute('aria-invalid'), 'true');
      assert.equal(
        await login.evaluate(() => document.activeElement?.id),
        await login.getByLabel('Email').getAttribute('id'),
      );

      await login.getByLabel('Email').fill(email);
      await login.getByLabel('Password').fill('not the password');
      await login.getByRole('button', { name: 'Log in' }).click();
      const alert = login.getByRole('alert').filter({ hasText: 'Wrong email or password' });
      await alert.waitFor();
      assert.equal(
        (await alert.innerText()).trim(),
        'Wrong email or password. Check both and try again.',
      );
      // No status codes or error codes in the words.
      assert.doesNotMatch(await login.locator('main').innerText(), /401|unauthorized/i);
      await snapshot(login, 'dashboard-login-error');

      await login.getByLabel('Password').fill(PASSWORD);
      await login.getByRole('button', { name: 'Log in' }).click();
      await login.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      assert.deepEqual(fresh.problems, []);
    } finally {
      await fresh.context.close();
    }
  });

  it('signs up with the keyboard alone, in a sensible focus order', async () => {
    const fresh = await newContext(browser);
    const kb = await fresh.context.newPage();
    try {
      await kb.goto(`${t.url}/dashboard/signup`);
      await kb.getByRole('heading', { name: 'Create your account' }).waitFor();
      const focused = () =>
        kb.evaluate(() => {
          const el = document.activeElement as HTMLElement | null;
          if (!el) return '';
          const label = (el as HTMLInputElement).labels?.[0]?.textContent;
          return `${el.tagName.toLowerCase()}:${(label ?? el.textContent ?? '').trim()}`;
        });
      const order: string[] = [];
      for (let i = 0; i < 5; i++) {
        await kb.keyboard.press('Tab');
        order.push(await focused());
      }
      assert.deepEqual(order, [
        'a:Shotsmith',
        'input:Email',
        'input:Password',
        'button:Create account',
        'a:Log in',
      ]);
      // The focused field is visibly marked.
      await kb.keyboard.press('Shift+Tab');
      await kb.keyboard.press('Shift+Tab');
      await kb.keyboard.press('Shift+Tab');
      assert.equal(await focused(), 'input:Email');
      const outline = await kb.evaluate(
        () => getComputedStyle(document.activeElement as Element).outlineStyle,
      );
      assert.equal(outline, 'solid');

      await kb.keyboard.type(uniqueEmail('keyboard'));
      await kb.keyboard.press('Tab');
      await kb.keyboard.type('short');
      await kb.keyboard.press('Enter');
      // Too short: the error is read out with the field and focus goes back to it.
      await kb.getByText('Use at least 8 characters.').waitFor();
      assert.equal(await focused(), 'input:Password');
      await kb.keyboard.press('Control+A');
      await kb.keyboard.type(PASSWORD);
      await kb.keyboard.press('Tab');
      assert.equal(await focused(), 'button:Create account');
      await kb.keyboard.press('Enter');
      await kb.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      // Focus moved to the new page's heading, ready for the next Tab.
      assert.equal(await focused(), 'h1:Overview');
      await kb.keyboard.press('Tab');
      assert.match(await focused(), /^(a|button):/);
      assert.deepEqual(fresh.problems, []);
    } finally {
      await fresh.context.close();
    }
  });

  it('does not jump while its pages load, even on a slow API', async () => {
    const fresh = await newContext(browser);
    const slow = await fresh.context.newPage();
    try {
      await slow.goto(`${t.url}/dashboard/login`);
      await slow.getByLabel('Email').fill(email);
      await slow.getByLabel('Password').fill(PASSWORD);
      await slow.getByRole('button', { name: 'Log in' }).click();
      await slow.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await slow.route('**/v1/**', async (route) => {
        await sleep(500);
        await route.continue();
      });
      for (const size of [DESKTOP, PHONE]) {
        await slow.setViewportSize(size);
        for (const [path, ready] of [
          ['/dashboard', '.chart[aria-busy="false"]'],
          ['/dashboard/keys', '.empty, tbody tr:not([aria-hidden])'],
          ['/dashboard/billing', '.comparison'],
          ['/dashboard/screenshots', '.shots > li:not([aria-hidden]), .empty'],
          ['/dashboard/storage', '.empty, tbody tr:not([aria-hidden])'],
          ['/dashboard/playground', 'form'],
        ] as const) {
          await slow.goto(`${t.url}${path}`);
          await slow.locator(ready).first().waitFor({ timeout: 15_000 });
          // Whatever is still on its way (plans for the playground) lands too.
          await slow.waitForLoadState('networkidle');
          await settle(slow);
          const shift = await layoutShift(slow);
          assert.ok(shift < 0.005, `${path} at ${size.width}px: layout shift ${shift}`);
        }
      }
    } finally {
      await fresh.context.close();
    }
  });

  it('loaded every page with no script errors and no Content-Security-Policy violations', () => {
    assert.deepEqual(problems, []);
  });
});
