/**
 * The documentation site in Chromium: each page renders with its navigation, without a
 * script error or a Content-Security-Policy violation, without sideways scrolling on a
 * desktop or a phone (snapshot() fails on it), its images loaded; the snapshots in
 * test-artifacts/ are the pictures of the docs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.ts';
import { launchBrowser, newContext, settle, snapshot } from '../helpers/web.ts';

describe('documentation site (browser)', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let problems: string[];
  let page: Page;
  before(async () => {
    t = await startApp({ db: 'sqlite' });
    browser = await launchBrowser();
    ({ context, problems } = await newContext(browser));
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const pages: Array<[string, string, string]> = [
    ['/docs', 'Getting started', 'docs-getting-started'],
    ['/docs/options', 'Options, with images', 'docs-options'],
    ['/docs/api-guide', 'API guide', 'docs-api-guide'],
    ['/docs/monitors', 'Monitors: a page watched for changes', 'docs-monitors'],
    ['/docs/errors', 'Errors', 'docs-errors'],
    ['/docs/self-hosting', 'Deployment', 'docs-self-hosting'],
    ['/docs/security', 'Running in the open', 'docs-security'],
  ];

  for (const [href, heading, name] of pages) {
    it(`shows ${href}`, async () => {
      await page.goto(`${t.url}${href}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      const nav = page.getByRole('navigation', { name: 'Documentation' });
      assert.ok(await nav.getByRole('link', { name: 'Getting started' }).isVisible());
      await settle(page);
      const broken = await page.evaluate(() =>
        [...document.images]
          .filter((img) => !img.complete || img.naturalWidth === 0)
          .map((img) => img.src),
      );
      assert.deepEqual(broken, []);
      await snapshot(page, name);
    });
  }

  it('follows the navigation to a section, and links the API reference', async () => {
    await page.goto(`${t.url}/docs`);
    await page
      .getByRole('navigation', { name: 'Documentation' })
      .getByRole('link', { name: 'Webhooks' })
      .click();
    await page.waitForURL(/\/docs\/api-guide#webhooks$/);
    assert.ok(await page.locator('#webhooks').isVisible());
    await page.goto(`${t.url}/docs/api/`);
    await page.locator('.swagger-ui .info .title').first().waitFor();
  });

  it('loaded every page with no script errors and no Content-Security-Policy violations', () => {
    assert.deepEqual(problems, []);
  });
});
