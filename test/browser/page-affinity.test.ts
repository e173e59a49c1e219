/**
 * A client's captures one after another stay in its own context: the next capture waits for
 * the page its previous one is giving back (being reset) instead of taking another context's
 * page. Chromium keeps a renderer process warm for the context used last, so a cross-site
 * navigation in the same context skips a process start on the critical path.
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

  it('sequential captures of one client reuse its page, leaving the spare for others', async () => {
    const capture = async (client: string, url: string) => {
      const result = await r.renderer.render(renderOptions({ url }), {
        deadline: Date.now() + 60_000,
        client: { id: client, maxConcurrent: 2 },
      });
      assert.equal(result.targetStatus, 200);
    };
    // The client's first capture takes a spare (it has no page yet); the pool makes another.
    await capture('one-client', `${sites[0]?.origin}/?first`);
    const before = await pagesWhenSettled();
    for (let i = 0; i < 8; i++) await capture('one-client', `${sites[i % 2]?.origin}/?i=${i}`);
    // Taking another context's page each time would have used the never-used spare, and the
    // pool would have made a new one: one page more.
    assert.equal(await pagesWhenSettled(), before);
    // The spare is still there for a new client.
    await capture('another-client', `${sites[1]?.origin}/?new`);
  });
});
