/**
 * Messages from a real Chromium over the protocol bound (process/cdp-pipe.ts): an event a page
 * makes too large is skipped and an answer too large fails its own command, while the browser,
 * its connection and every other page on it carry on. The API-level case (three tenants, one
 * of them logging 40 MB) is test/api/oversized-messages.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  BrowserInstance,
  type ContextPage,
} from '../../src/adapters/browser/process/browser-instance.ts';
import { OVERSIZED_ANSWER } from '../../src/adapters/browser/process/cdp-pipe.ts';
import { findChromium } from '../../src/adapters/browser/process/find-chromium.ts';
import { longDataDir, removeDataDir } from '../helpers/data-dir.ts';

const BOUND = 1024 * 1024;

describe('protocol messages over the bound, from a real browser', () => {
  let dir: string;
  let instance: BrowserInstance;
  let a: ContextPage;
  let b: ContextPage;
  const dropped: Record<string, unknown>[] = [];

  before(async () => {
    const executablePath = findChromium();
    assert.ok(executablePath, 'a Chromium is installed');
    dir = await longDataDir('bounds');
    const logger = {
      warn: (fields: Record<string, unknown>) => dropped.push(fields),
      info: () => {},
      error: () => {},
      debug: () => {},
      child: () => logger,
    };
    instance = await BrowserInstance.launch({
      executablePath,
      dataDir: dir,
      maxMessageBytes: BOUND,
      logger: logger as never,
    });
    a = await instance.newContextPage();
    b = await instance.newContextPage();
  });
  after(async () => {
    await instance?.close();
    await removeDataDir(dir);
  });

  it('skips a console event over the bound; the page and its neighbour carry on', async () => {
    const logged: number[] = [];
    a.page.on('console', (message) => logged.push(message.text().length));
    const neighbour = b.page.evaluate(
      () => new Promise<string>((resolve) => setTimeout(() => resolve('neighbour done'), 1500)),
    );
    await a.page.evaluate((n) => {
      console.log('x'.repeat(n));
      console.log('after');
    }, 2 * BOUND);
    assert.equal(await neighbour, 'neighbour done');
    assert.equal(await a.page.evaluate(() => 6 * 7), 42);
    // The small message after it arrives; the large one never does.
    const until = Date.now() + 5000;
    while (!logged.includes(5) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(logged, [5]);
    assert.ok(instance.browser.connected);
    assert.equal(instance.cutReason, null);
    assert.ok(dropped.some((d) => d.kind === 'event' && d.method === 'Runtime.consoleAPICalled'));
  });

  it('fails only the command whose answer is over the bound', async () => {
    await assert.rejects(
      a.page.evaluate((n) => 'y'.repeat(n), 2 * BOUND),
      (err: Error) => err.message.includes(OVERSIZED_ANSWER),
    );
    assert.equal(await a.page.evaluate(() => document.readyState), 'complete');
    assert.equal(await b.page.evaluate(() => 'still here'), 'still here');
    assert.ok(instance.browser.connected);
    assert.equal(instance.cutReason, null);
    assert.ok(dropped.some((d) => d.kind === 'answer'));
  });
});
