/**
 * A client's captures one after another stay in its own contexts: it holds two pages, one
 * reset while it captures on the other, and never takes another context's page after that
 * (no new context per capture). Chromium keeps a renderer process warm for the contexts used
 * last, so a cross-site navigation in them skips a process start on the critical path.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { renderOptions, startRenderer, type TestRenderer } from './helpers.ts';

describe('page affinity of a client', () => {
  let sites: FixtureSite[];
  let r: TestRenderer;

  before(async () => {
    // Two sites: every capture is a cross-site navigation from the previous one.
    sites = [
      await startSite({ '/': page('<h1>one</h1>') }, '127.0.0.1'),
      await startSite({ '/': page('<h1>two</h1>') }, '127.0.0.2'),
    ];
    r = await startRenderer({ concurrency: 2 });
  });
  after(async () => {
    await r?.close();
    for (const site of sites ?? []) await site.close();
  });

  const pagesWhenSettled = async (): Promise<number> => {
    // Pages are made and given back in the background; wait until the count holds.
    let last = -1;
    for (let stable = 0; stable < 5; ) {
      const now = r.renderer.pages;
      stable = now === last ? stable + 1 : 0;
      last = now;
      await sleep(200);
    }
    return last;
  };

  it('sequential captures of one client reuse its two pages, leaving a spare for others', async () => {
    const capture = async (client: string, url: string) => {
      const result = await r.renderer.render(renderOptions({ url }), {
        deadline: Date.now() + 60_000,
        client: { id: client, maxConcurrent: 2 },
      });
      assert.equal(result.targetStatus, 200);
    };
    // The client's first capture takes a spare (it has no page yet); the pool makes another.
    await capture('one-client', `${sites[0]?.origin}/?first`);
    await pagesWhenSettled();
    // Two in a row: the second one finds the client's one page being reset and takes a spare.
    await capture('one-client', `${sites[1]?.origin}/?second`);
    await capture('one-client', `${sites[0]?.origin}/?third`);
    const before = await pagesWhenSettled();
    for (let i = 0; i < 8; i++) await capture('one-client', `${sites[i % 2]?.origin}/?i=${i}`);
    // Taking another context's page each time would have used the never-used spare, and the
    // pool would have made a new one: one page more.
    assert.equal(await pagesWhenSettled(), before);
    // The spare is still there for a new client.
    await capture('another-client', `${sites[1]?.origin}/?new`);
  });
});
