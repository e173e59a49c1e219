/**
 * A browser that is connected but no longer answers (here: SIGSTOPped). A capture that cannot
 * get a page from it is a 503 with Retry-After, never a 500
 * (docs/security.md, "No browser, no 500"), and the browser is replaced so the next captures
 * work again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../../src/domain/errors.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { browserPid, renderOptions, startRenderer, type TestRenderer } from './helpers.ts';

describe('a wedged browser', () => {
  let site: FixtureSite;
  let t: TestRenderer;
  const stopped: number[] = [];

  before(async () => {
    site = await startSite({ '/ok': page('<p>fine</p>') });
    // One slot, one page: a second client's capture must create a new page.
    t = await startRenderer({ concurrency: 1, pagesPerSlot: 1 });
  });

  after(async () => {
    for (const pid of stopped) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Gone (replaced and killed).
      }
    }
    await t?.close();
    await site?.close();
  });

  const render = (client: string, timeoutMs: number) =>
    t.renderer.render(renderOptions({ url: `${site.origin}/ok` }), {
      deadline: Date.now() + timeoutMs,
      client: { id: client, maxConcurrent: 1 },
    });

  it('no page from it: 503 overloaded with Retry-After, and it is replaced', {
    timeout: 180_000,
  }, async () => {
    await render('a', 30_000);
    // Let the page's reset after the capture finish (a stop during it replaces the browser
    // through another path).
    await sleep(3_000);
    const restarts = t.renderer.stats().restarts;
    const pid = browserPid(t.dataDir);
    process.kill(pid, 'SIGSTOP');
    stopped.push(pid);
    // Client b has no page; the only one (a's) makes room for a new one, which never comes.
    let failure: unknown = null;
    try {
      await render('b', 60_000);
    } catch (err) {
      failure = err;
    }
    assert.ok(failure instanceof AppError, `expected an AppError, got ${String(failure)}`);
    assert.equal(failure.code, 'overloaded', `got ${failure.code}: ${failure.message}`);
    assert.match(failure.headers?.['Retry-After'] ?? '', /^[1-9]\d*$/);

    // The next captures go to a new browser (bounded: a launch on a busy machine is slow).
    const end = Date.now() + 90_000;
    for (;;) {
      try {
        await render('c', 30_000);
        break;
      } catch (err) {
        assert.ok(Date.now() < end, `no capture succeeded after the wedge: ${String(err)}`);
        await sleep(500);
      }
    }
    assert.ok(t.renderer.stats().restarts > restarts, 'the wedged browser was replaced');
  });
});
