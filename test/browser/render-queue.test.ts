/**
 * Slots, the bounded queue and the one deadline per capture (queue time included), and
 * cancellation through the caller's signal.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../../src/domain/errors.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { rejectsWith, renderOptions, startRenderer, type TestRenderer } from './helpers.ts';

describe('render queue, deadlines and abort', () => {
  let site: FixtureSite;
  let t: TestRenderer;
  const pending = new Set<ServerResponse>();

  before(async () => {
    site = await startSite({
      '/ok': page('<p>ok</p>'),
      // Answers only when released (or after 10 s).
      '/held': (_req, res) => {
        pending.add(res);
        const timer = setTimeout(() => release(), 10_000);
        res.on('close', () => {
          clearTimeout(timer);
          pending.delete(res);
        });
      },
    });
    t = await startRenderer({ concurrency: 1, queueSize: 1 });
  });
  after(async () => {
    release();
    await t?.close();
    await site?.close();
  });

  function release(): void {
    for (const res of pending)
      res.writeHead(200, { 'content-type': 'text/html' }).end(page('<p>released</p>'));
    pending.clear();
  }

  const render = (path: string, timeoutMs = 15_000, signal?: AbortSignal) =>
    t.renderer.render(renderOptions({ url: `${site.origin}${path}` }), {
      deadline: Date.now() + timeoutMs,
      ...(signal ? { signal } : {}),
    });

  async function waitFor(condition: () => boolean): Promise<void> {
    for (let i = 0; i < 100 && !condition(); i++) await sleep(20);
    assert.ok(condition(), 'condition not reached');
  }

  it('a full queue refuses at once with overloaded and Retry-After', async () => {
    const busy = render('/held');
    await waitFor(() => pending.size === 1);
    const queued = render('/ok');
    await waitFor(() => t.renderer.stats().queued === 1);
    assert.deepEqual(t.renderer.stats(), { inUse: 1, queued: 1, restarts: 0, captures: 0 });
    const started = Date.now();
    const err = await rejectsWith(render('/ok'), 'overloaded', /render queue is full/);
    // Generous for a busy machine; waiting would mean until the held capture is released.
    assert.ok(Date.now() - started < 1_000, 'refused without waiting');
    assert.deepEqual(err.headers, { 'Retry-After': '5' });
    release();
    assert.equal((await busy).targetStatus, 200);
    assert.equal((await queued).targetStatus, 200);
    await waitFor(() => t.renderer.stats().inUse === 0);
  });

  it('the deadline counts queue time: a capture that waits too long is render_timeout', async () => {
    const busy = render('/held');
    await waitFor(() => pending.size === 1);
    const started = Date.now();
    await rejectsWith(render('/ok', 600), 'render_timeout', /waiting for a free browser slot/);
    const waited = Date.now() - started;
    assert.ok(waited >= 550 && waited < 1_000, `waited ${waited} ms`);
    assert.equal(t.renderer.stats().queued, 0);
    release();
    await busy;
  });

  it('a deadline already past fails at once', async () => {
    await rejectsWith(
      t.renderer.render(renderOptions({ url: `${site.origin}/ok` }), { deadline: Date.now() - 1 }),
      'render_timeout',
    );
  });

  it('the deadline covers the render itself', async () => {
    const started = Date.now();
    await rejectsWith(render('/held', 800), 'render_timeout', /loading the page/);
    const took = Date.now() - started;
    assert.ok(took >= 750 && took < 4_000, `took ${took} ms`);
    release();
    assert.equal((await render('/ok')).targetStatus, 200);
  });

  it('abort ends a running capture promptly with the signal reason and frees the slot', async () => {
    const controller = new AbortController();
    const reason = new AppError('unauthorized', 'unauthorized');
    const capture = render('/held', 15_000, controller.signal);
    await waitFor(() => pending.size === 1);
    const aborted = Date.now();
    controller.abort(reason);
    await assert.rejects(capture, (err) => err === reason);
    assert.ok(Date.now() - aborted < 1_500, `took ${Date.now() - aborted} ms`);
    const next = await render('/ok');
    assert.equal(next.targetStatus, 200);
  });

  it('abort while queued leaves the queue at once; an aborted signal never starts', async () => {
    const busy = render('/held');
    await waitFor(() => pending.size === 1);
    const controller = new AbortController();
    const queued = render('/ok', 15_000, controller.signal);
    await waitFor(() => t.renderer.stats().queued === 1);
    controller.abort(new Error('gone'));
    await assert.rejects(queued, /gone/);
    assert.equal(t.renderer.stats().queued, 0);
    const already = new AbortController();
    already.abort(new Error('before'));
    await assert.rejects(render('/ok', 15_000, already.signal), /before/);
    release();
    await busy;
  });

  it('counts captures', async () => {
    const before = t.renderer.stats().captures;
    await render('/ok');
    assert.equal(t.renderer.stats().captures, before + 1);
    assert.equal(t.renderer.ready(), true);
  });
});
