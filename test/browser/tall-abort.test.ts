/**
 * A tall capture ended while its slices are drawn (docs/api.md, "Tall pages"): a caller's
 * abort (a revoked key; the deadline ends a capture the same way) stops it between slices,
 * the render rejects with the abort's reason, and the renderer's next tall capture is whole.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import {
  assertColor,
  decodeImage,
  renderOptions,
  startRenderer,
  type TestRenderer,
} from './helpers.ts';

const RED = [255, 0, 0];
const BLUE = [0, 0, 255];

describe('tall capture ended while drawing its slices', () => {
  let site: FixtureSite;
  let t: TestRenderer;
  /** Aborted by the renderer's debug line that says the slices are about to be drawn. */
  let abortOnSlices: AbortController | null = null;
  const drawing: number[] = [];

  before(async () => {
    site = await startSite({
      // 20,000 px: red, then blue from 10,000 down.
      '/tall': page(
        '<div style="height:10000px;background:rgb(255,0,0)"></div>' +
          '<div style="height:10000px;background:rgb(0,0,255)"></div>',
      ),
    });
    t = await startRenderer({
      concurrency: 1,
      maxPageHeight: 65_535,
      logger: {
        debug: (obj: object, msg: string) => {
          if (msg !== 'drawing a tall image in slices') return;
          drawing.push((obj as { slices: number }).slices);
          abortOnSlices?.abort(new Error('revoked while drawing the slices'));
        },
        info: () => {},
        warn: () => {},
        error: () => {},
      },
    });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const options = () =>
    renderOptions({ url: `${site.origin}/tall`, width: 400, height: 300, fullPage: true });

  it('rejects with the abort, then captures the next tall page whole', {
    timeout: 300_000,
  }, async () => {
    abortOnSlices = new AbortController();
    await assert.rejects(
      t.renderer.render(options(), {
        deadline: Date.now() + 120_000,
        signal: abortOnSlices.signal,
      }),
      /revoked while drawing the slices/,
    );
    assert.deepEqual(drawing, [5], 'it was drawing five slices when aborted');
    abortOnSlices = null;
    const result = await t.renderer.render(options(), { deadline: Date.now() + 120_000 });
    assert.deepEqual([result.width, result.height, result.truncated], [400, 20_000, false]);
    const image = decodeImage(result.image);
    assertColor(image, 200, 9_950, RED, 'the red half, to its end');
    assertColor(image, 200, 10_050, BLUE, 'the blue half, from its start');
    assertColor(image, 200, 19_990, BLUE, 'the last rows');
  });
});
