import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BOUNDS } from '../../../../domain/bounds.ts';
import {
  pageBoolean,
  pageBox,
  pageChoice,
  pageMetadata,
  pageNumber,
  pageText,
  pageTokens,
} from './page-values.ts';

const unexpected = { name: 'AppError', code: 'internal_error' };

describe('values read back from a page', () => {
  it('takes numbers, booleans and boxes of the right type only', () => {
    assert.equal(pageNumber(12.5, 'height'), 12.5);
    for (const bad of ['12', Number.NaN, Number.POSITIVE_INFINITY, null, {}]) {
      assert.throws(() => pageNumber(bad, 'height'), unexpected);
    }
    assert.equal(pageBoolean(false, 'found'), false);
    assert.throws(() => pageBoolean('true', 'found'), unexpected);
    assert.deepEqual(pageBox({ x: 1, y: 2, width: 3, height: 4, extra: 'x'.repeat(10) }), {
      x: 1,
      y: 2,
      width: 3,
      height: 4,
    });
    assert.equal(pageBox(null), null);
    assert.throws(() => pageBox({ x: 1, y: 2, width: '3', height: 4 }), unexpected);
  });

  it('takes back only a selector it sent', () => {
    assert.equal(pageChoice('#a', ['#a', '#b'], 'selector'), '#a');
    assert.equal(pageChoice(null, ['#a'], 'selector'), null);
    assert.throws(() => pageChoice('#c', ['#a'], 'selector'), unexpected);
  });

  it('holds texts and metadata to their documented lengths', () => {
    assert.equal(pageText('abc', 3, 'text'), 'abc');
    assert.throws(() => pageText('abcd', 3, 'text'), unexpected);
    assert.throws(() => pageText(42, 3, 'text'), unexpected);
    const max = BOUNDS.capture.maxMetadataText;
    const fine = {
      title: 't'.repeat(max),
      description: null,
      og: { title: null, description: 'd', image: 'https://example.com/i.png' },
      icon_url: null,
    };
    assert.deepEqual(pageMetadata(fine), fine);
    assert.throws(() => pageMetadata({ ...fine, title: 't'.repeat(max + 1) }), unexpected);
    assert.throws(
      () => pageMetadata({ ...fine, icon_url: `https://e.com/${'a'.repeat(2_048)}` }),
      unexpected,
    );
    assert.throws(() => pageMetadata('title'), unexpected);
  });

  it('holds the token lists to pageValueMaxChars in all', () => {
    const half = 'c'.repeat(BOUNDS.capture.pageValueMaxChars / 2);
    assert.deepEqual(pageTokens({ classes: [half], ids: [], hrefs: [half] }), {
      classes: [half],
      ids: [],
      hrefs: [half],
    });
    assert.throws(() => pageTokens({ classes: [half], ids: ['x'], hrefs: [half] }), unexpected);
    assert.throws(() => pageTokens({ classes: [1], ids: [], hrefs: [] }), unexpected);
    assert.throws(() => pageTokens({ classes: [], ids: [] }), unexpected);
  });
});
