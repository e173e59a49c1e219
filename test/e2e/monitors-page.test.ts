import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { PASSWORD, startApp, type TestApp, uniqueEmail } from '../helpers/app.ts';
import {
  assertNear,
  type FixtureSite,
  page as html,
  pngPixel,
  type Rgb,
  sleep,
  startSite,
} from '../helpers/fixtures.ts';
import {
  ARTIFACTS_DIR,
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

/** The watched page's colour before and after it changes. */
const BLUE: Rgb = [37, 99, 235];
const GREEN: Rgb = [22, 163, 74];
const css = (c: Rgb) => `rgb(${c.join(', ')})`;
/** Pro's monthly quota here: two runs fit, the third finds the month spent. */
const QUOTA = 2;

/**
 * The dashboard's Monitors page in Chromium against the real app, one account's journey in
 * order: Free is told monitors are Pro; the account upgrades through the local checkout;
 * creates a monitor with the form (the playground's fields); runs it now twice, the fixture
 * page changing colour in between; the timeline shows the change with a slider that moves
 * the clip (and the pixels) and a diff that loads; a run past the quota fails with its error
 * and pauses the monitor, which Resume restarts; pause, edit, delete. Screenshots of each
 * state go to test-artifacts/monitors-*.png.
 */
describe('monitors page (browser)', () => {
  let t: TestApp;
  let site: FixtureSite;
  let hooks: WebhookReceiver;
  let browser: Browser;
  let context: BrowserContext;
  let problems: string[];
  let page: Page;
  let colour = BLUE;

  before(async () => {
    await buildWeb();
    site = await startSite({
      '/watched': (_req, res) => {
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            html(
              `<main style="height:100vh;background:${css(colour)};font:40px sans-serif;color:#fff">Watched</main>`,
            ),
          );
      },
    });
    hooks = await startWebhookReceiver();
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: `${site.hostPort},${hooks.hostPort}` },
      plans: { pro: { monthly_quota: QUOTA } },
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
    console.log(`monitors page screenshots: ${ARTIFACTS_DIR}/monitors-*.png`);
  });

  const heading = (name: string) => page.getByRole('heading', { level: 1, name, exact: true });
  const nav = (name: string) =>
    page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true });
  const notice = (text: string | RegExp) => page.locator('.notice').filter({ hasText: text });
  const card = (name: string) =>
    page.locator('.monitor').filter({ has: page.getByRole('heading', { name, exact: true }) });
  /** The account's monitors as the dashboard's own API answers them (same cookies). */
  const monitors = async () => {
    const res = await page.request.get(`${t.url}/v1/account/monitors`);
    assert.equal(res.status(), 200);
    return ((await res.json()) as { data: Array<Record<string, unknown>> }).data;
  };
  /** The colour at a share of the element's width, at half its height, as drawn. */
  const colourAt = async (element: Locator, share: number): Promise<Rgb> => {
    const png = PNG.sync.read(await element.screenshot());
    return pngPixel(png, (png.width - 1) * share, png.height / 2);
  };

  it('tells a Free account that monitors are Pro, with no form', async () => {
    await page.goto(`${t.url}/dashboard/signup`);
    await page.getByLabel('Email').fill(uniqueEmail('monitors'));
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading('Overview').waitFor();
    await nav('Monitors').click();
    await heading('Monitors').waitFor();
    const pro = page.getByRole('region', { name: 'Monitors are a Pro feature' });
    await pro.waitFor();
    // The Pro plan's own numbers, once the plans load.
    await pro.getByText(/up to 20 monitors, run as often as every 15 minutes/).waitFor();
    assert.match(await pro.innerText(), /max_monitors/);
    assert.equal(await page.locator('form').count(), 0, 'no form to fill in');
    assert.equal(await page.getByLabel('Page URL').count(), 0);
    await snapshot(page, 'monitors-free');

    await pro.getByRole('link', { name: 'Upgrade to Pro' }).click();
    await heading('Billing').waitFor();
    await page.getByRole('button', { name: /^Upgrade to Pro/ }).click();
    await page.waitForURL(/\/billing\/local\/checkout\//);
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL(/\/dashboard$/);
    await notice('You are on Pro now.').waitFor({ timeout: 30_000 });
  });

  it('creates a monitor with the form built from the playground’s fields', async () => {
    await nav('Monitors').click();
    await heading('Monitors').waitFor();
    // No monitors yet: the form is open.
    const form = page.getByRole('region', { name: 'New monitor' });
    await form.getByLabel('Page URL').waitFor();
    await page.locator('.empty').filter({ hasText: 'No monitors yet' }).waitFor();
    // What a monitor cannot take is not offered: PDF, Markdown and batches, the answer's extras.
    const sources = await form
      .getByLabel('Capture', { exact: true })
      .locator('option')
      .allInnerTexts();
    assert.deepEqual(sources, ['A page at a URL', 'HTML']);
    const formats = await form.getByLabel('Format').locator('option').allInnerTexts();
    assert.deepEqual(formats, ['PNG', 'JPEG', 'WEBP']);
    await form.getByText('Page actions').click();
    assert.equal(await form.getByLabel('Cache TTL (seconds)').count(), 0);
    assert.equal(await form.getByLabel('Fresh render (skip the cache)').count(), 0);
    // Nothing to watch yet: said, not sent.
    await form.getByRole('button', { name: 'Create monitor' }).click();
    await notice('Enter the address of the page to watch.').waitFor();

    await form.getByLabel('Page URL').fill(`${site.origin}/watched`);
    await form.getByLabel('Width', { exact: true }).fill('400');
    await form.getByLabel('Height', { exact: true }).fill('300');
    await form.getByLabel('Name (optional)').fill('Pricing');
    await form.getByLabel('Runs', { exact: true }).selectOption('1d');
    await form.getByLabel('Change threshold (% of pixels)').fill('0.5');
    await form.getByLabel('Ignore (CSS selectors, one a line)').fill('#clock\n\n.ad');
    await form.getByLabel('Webhook URL (optional)').fill(hooks.url);
    assert.deepEqual(await unlabelledFields(page), []);
    await snapshot(page, 'monitors-create-form');
    await form.getByRole('button', { name: 'Create monitor' }).click();
    await notice(/The monitor “Pricing” is created/).waitFor();

    const pricing = card('Pricing');
    await pricing.waitFor();
    assert.match(await pricing.locator('.badge').innerText(), /^Active$/);
    const facts = await pricing.locator('.facts').innerText();
    assert.match(facts, /Every day/);
    assert.match(facts, /Last run\s+Never/);
    assert.match(facts, /Last change\s+None yet/);
    assert.match(facts, /0\.5% of the pixels/);
    const [created, ...others] = await monitors();
    assert.equal(others.length, 0);
    assert.deepEqual(
      {
        name: created?.name,
        url: created?.url,
        options: created?.options,
        every: created?.every,
        threshold: created?.threshold,
        ignore_selectors: created?.ignore_selectors,
        webhook_url: created?.webhook_url,
        status: created?.status,
      },
      {
        name: 'Pricing',
        url: `${site.origin}/watched`,
        options: { format: 'png', width: 400, height: 300 },
        every: '1d',
        threshold: 0.005,
        ignore_selectors: ['#clock', '.ad'],
        webhook_url: hooks.url,
        status: 'active',
      },
    );
    await snapshot(page, 'monitors-list');
  });

  it('runs it now twice: a baseline, then a change compared with a slider and a diff', async () => {
    const pricing = card('Pricing');
    await pricing.getByRole('button', { name: /^Run now/ }).click();
    const timeline = pricing.getByRole('region', { name: /^Runs/ });
    await timeline.waitFor();
    assert.equal(
      await pricing.getByRole('button', { name: /^Runs of/ }).getAttribute('aria-expanded'),
      'true',
    );
    const runs = timeline.locator('.runs > li');
    await runs.filter({ hasText: 'First run: the baseline' }).waitFor({ timeout: 60_000 });

    colour = GREEN;
    await pricing.getByRole('button', { name: /^Run now/ }).click();
    const changed = runs.filter({ hasText: /Changed: [\d.]+% of the pixels/ });
    await changed.waitFor({ timeout: 60_000 });
    assert.equal(await runs.count(), 2);
    assert.match(await runs.first().innerText(), /Changed/, 'newest first');
    // The monitor's own facts moved with the run.
    await pricing.locator('.facts').filter({ hasNotText: 'None yet' }).waitFor();

    // Before is the baseline's image, after this run's, both loaded.
    const [baseline, latest] = await (async () => {
      const res = await page.request.get(`${t.url}/v1/account/monitors/${await monitorId()}/runs`);
      const body = (await res.json()) as { data: Array<{ image_url: string; diff_url?: string }> };
      return [body.data[1], body.data[0]];
    })();
    const beforeImg = changed.getByRole('img', { name: /^Before: the page at/ });
    const afterImg = changed.getByRole('img', { name: /^After: the page at/ });
    assert.equal(await beforeImg.getAttribute('src'), baseline?.image_url);
    assert.equal(await afterImg.getAttribute('src'), latest?.image_url);
    await settle(page);
    for (const img of [beforeImg, afterImg]) {
      assert.equal(await img.evaluate((i: HTMLImageElement) => i.naturalWidth), 400);
    }

    // The slider clips the earlier image: half and half, then all after, then all before.
    const frame = changed.locator('.compare-frame');
    const slider = changed.getByRole('slider', { name: 'Before and after' });
    const clip = () => beforeImg.evaluate((i) => getComputedStyle(i).clipPath);
    assert.equal(await clip(), 'inset(0px 50% 0px 0px)');
    assertNear(await colourAt(frame, 0.2), BLUE, 'left of the line: before');
    assertNear(await colourAt(frame, 0.8), GREEN, 'right of the line: after');
    // By keyboard, as anyone can: Home, then a few steps right.
    await slider.focus();
    await page.keyboard.press('Home');
    assert.equal(await clip(), 'inset(0px 100% 0px 0px)');
    assertNear(await colourAt(frame, 0.2), GREEN, 'slider at 0: after only');
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
    assert.equal(await clip(), 'inset(0px 95% 0px 0px)');
    await page.keyboard.press('End');
    assert.equal(await clip(), 'inset(0px 0% 0px 0px)');
    assertNear(await colourAt(frame, 0.8), BLUE, 'slider at 100: before only');
    assert.equal(await slider.getAttribute('aria-valuetext'), '100% before, 0% after');
    await slider.fill('60');
    assert.equal(await clip(), 'inset(0px 40% 0px 0px)');
    await snapshot(page, 'monitors-timeline-slider');

    // The diff: toggled on, loaded, every pixel of the recoloured page marked red.
    const toggle = changed.getByRole('button', { name: 'Show the changes' });
    assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
    await toggle.click();
    assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
    const diff = changed.getByRole('img', { name: /^The changes/ });
    await diff.waitFor();
    assert.equal(await diff.getAttribute('src'), latest?.diff_url);
    await settle(page);
    assert.ok((await diff.evaluate((i: HTMLImageElement) => i.naturalWidth)) > 0);
    const [r, g, b] = await colourAt(frame, 0.5);
    assert.ok(r > 150 && g < 100 && b < 100, `the diff marks the change in red: ${[r, g, b]}`);
    assert.ok(await slider.isDisabled(), 'the slider rests while the diff is shown');
    await snapshot(page, 'monitors-diff');
    await toggle.click();
    assert.ok(await slider.isEnabled());

    // The page compared what the service compared: its event names the same earlier image.
    const [hook] = await hooks.waitFor(1);
    const event = JSON.parse(hook?.body ?? '{}') as { type: string; data: Record<string, unknown> };
    assert.equal(event.type, 'monitor.changed');
    assert.equal(event.data.previous_image_url, await beforeImg.getAttribute('src'));
    assert.equal(event.data.image_url, await afterImg.getAttribute('src'));
  });

  it('a run past the month’s quota fails with its error and pauses; Resume restarts it', async () => {
    const pricing = card('Pricing');
    await pricing.getByRole('button', { name: /^Run now/ }).click();
    const failed = pricing.locator('.runs > li').filter({ hasText: 'Failed' });
    await failed.waitFor({ timeout: 60_000 });
    assert.match(await failed.locator('.run-error').innerText(), /quota/i);
    await pricing.locator('.badge').filter({ hasText: 'Paused: quota used up' }).waitFor();
    const explanation = pricing.locator('.notice').filter({ hasText: 'captures are used up' });
    assert.match(await explanation.innerText(), /Resume it once your quota resets/);
    await snapshot(page, 'monitors-paused-quota');
    await explanation.getByRole('button', { name: /^Resume/ }).click();
    await pricing
      .locator('.badge')
      .filter({ hasText: /^Active$/ })
      .waitFor();
    await notice('Resumed: it runs again at its next slot.').waitFor();
    assert.equal((await monitors())[0]?.status, 'active');
  });

  it('pauses, resumes and edits the monitor', async () => {
    const pricing = card('Pricing');
    await pricing.getByRole('button', { name: /^Pause/ }).click();
    await pricing
      .locator('.badge')
      .filter({ hasText: /^Paused$/ })
      .waitFor();
    await pricing.locator('.notice').filter({ hasText: 'Run now still works.' }).waitFor();
    assert.equal((await monitors())[0]?.status, 'paused');
    await pricing.getByRole('button', { name: /^Resume/ }).click();
    await pricing
      .locator('.badge')
      .filter({ hasText: /^Active$/ })
      .waitFor();

    await pricing.getByRole('button', { name: /^Edit/ }).click();
    const edit = page.getByRole('form', { name: 'Edit Pricing' });
    await edit.waitFor();
    assert.equal(await edit.getByLabel('Name (optional)').inputValue(), 'Pricing');
    assert.equal(await edit.getByLabel('Change threshold (% of pixels)').inputValue(), '0.5');
    assert.equal(await edit.getByLabel('Webhook URL (optional)').inputValue(), hooks.url);
    await edit.getByLabel('Name (optional)').fill('Pricing page');
    await edit.getByLabel('Runs', { exact: true }).selectOption('7d');
    await edit.getByLabel('Change threshold (% of pixels)').fill('1');
    await edit.getByLabel('Webhook URL (optional)').fill('');
    assert.deepEqual(await unlabelledFields(page), []);
    await edit.getByRole('button', { name: 'Save changes' }).click();
    const renamed = card('Pricing page');
    await renamed.waitFor();
    await notice('Changes saved.').waitFor();
    const facts = await renamed.locator('.facts').innerText();
    assert.match(facts, /Every week/);
    assert.match(facts, /1% of the pixels/);
    const [m] = await monitors();
    assert.equal(m?.name, 'Pricing page');
    assert.equal(m?.every, '7d');
    assert.equal(m?.threshold, 0.01);
    assert.equal(m?.webhook_url, undefined, 'an emptied webhook URL stops the events');
  });

  it('does not jump while it loads, even on a slow API', async () => {
    await page.route('**/v1/**', async (route) => {
      await sleep(500);
      await route.continue();
    });
    try {
      for (const size of [DESKTOP, PHONE]) {
        await page.setViewportSize(size);
        await page.goto(`${t.url}/dashboard/monitors`);
        await card('Pricing page').waitFor({ timeout: 15_000 });
        await page.waitForLoadState('networkidle');
        await settle(page);
        const shift = await layoutShift(page);
        assert.ok(shift < 0.005, `at ${size.width}px: layout shift ${shift}`);
      }
    } finally {
      await page.unroute('**/v1/**');
      await page.setViewportSize(DESKTOP);
    }
  });

  it('deletes the monitor after confirming', async () => {
    const renamed = card('Pricing page');
    const id = await monitorId();
    await renamed.getByRole('button', { name: /^Delete/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this monitor?' });
    await dialog.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Cancel');
    await dialog.getByRole('button', { name: 'Delete monitor' }).click();
    await notice('The monitor “Pricing page” is deleted, with its runs.').waitFor();
    await page.locator('.empty').filter({ hasText: 'No monitors yet' }).waitFor();
    assert.equal((await page.request.get(`${t.url}/v1/account/monitors/${id}`)).status(), 404);
  });

  it('loaded with no script errors and no Content-Security-Policy violations', () => {
    assert.deepEqual(problems, []);
  });

  async function monitorId(): Promise<string> {
    const [m] = await monitors();
    assert.ok(m, 'a monitor');
    return String(m.id);
  }
});
