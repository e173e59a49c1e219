import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEgress } from '../src/adapters/egress/guard.ts';
import {
  type CaptureInput,
  cacheKeyFor,
  credentialDigest,
  resolveCaptureOptions,
} from '../src/domain/captures/capture-options.ts';
import { ProxyDirectory } from '../src/domain/captures/proxy-directory.ts';
import { RequestResolutions } from '../src/domain/captures/request-resolutions.ts';
import { isAppError } from '../src/domain/errors.ts';
import { DEFAULT_PLANS, type Plan } from '../src/domain/plans.ts';
import { createSecretDeriver } from '../src/lib/server-secret.ts';

const DIGEST = credentialDigest(createSecretDeriver('test server secret '.repeat(2)));

// Only resolution and the screen run here (no DNS, no connection): the names and
// addresses below are never reached.
function resolutions(ownAddresses: string[] = []) {
  const { guard } = createEgress({
    allowlist: '',
    selfPorts: [],
    resolver: {
      resolve: async () => {
        throw new Error('no lookups in this test');
      },
    },
    interfaceAddresses: () => ownAddresses,
  });
  return new RequestResolutions({ guard, digest: DIGEST, proxies: new ProxyDirectory([]) });
}

const owner = (plan: Plan) => ({ plan, cacheOwner: `user:1:${plan.name}` });
const errorOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    assert.ok(isAppError(err));
    return `${err.code}: ${err.message}`;
  }
  assert.fail('not refused');
};

test('a repeat is answered with what the request resolves to anew', () => {
  const memo = resolutions();
  const url = new URL('https://example.com/a?b=1');
  const input: CaptureInput = { url: url.href, width: 800, format: 'jpeg' };
  const first = memo.resolve(input, owner(DEFAULT_PLANS.pro));
  const again = memo.resolve({ ...input }, owner(DEFAULT_PLANS.pro));
  assert.equal(again, first, 'the repeat is the kept resolution');
  const anew = resolveCaptureOptions(input, url, DEFAULT_PLANS.pro);
  assert.deepEqual(again.render, anew.render);
  assert.equal(again.fresh, anew.fresh);
  assert.equal(again.cacheTtlMs, anew.cacheTtlMs);
  assert.equal(
    again.cacheKey,
    cacheKeyFor('user:1:pro', { ...anew.render, cacheTtlMs: anew.cacheTtlMs }, DIGEST),
  );
  assert.equal(again.url?.href, url.href);
});

test('owners and plans never share a resolution', () => {
  const memo = resolutions();
  const input: CaptureInput = { url: 'https://example.com/', width: 3000 };
  const pro = memo.resolve(input, owner(DEFAULT_PLANS.pro));
  const other = memo.resolve(input, { plan: DEFAULT_PLANS.pro, cacheOwner: 'user:2:pro' });
  assert.notEqual(other.cacheKey, pro.cacheKey, 'another account has its own cache key');
  // The same owner text under another plan object (a plans file with other limits).
  const narrower = { ...DEFAULT_PLANS.pro, max_width: 1280 };
  const capped = memo.resolve(input, { plan: narrower, cacheOwner: 'user:1:pro' });
  assert.equal(capped.render.width, 1280);
  assert.equal(memo.resolve(input, owner(DEFAULT_PLANS.pro)).render.width, pro.render.width);
});

test('a refused request is refused on every repeat', () => {
  const memo = resolutions();
  const input: CaptureInput = { url: 'https://example.com/', width: 5000, format: 'webp' };
  const refusal = errorOf(() => memo.resolve(input, owner(DEFAULT_PLANS.free)));
  assert.match(refusal, /^plan_restriction: /);
  assert.equal(
    errorOf(() => memo.resolve(input, owner(DEFAULT_PLANS.free))),
    refusal,
  );
});

test("a kept request's URL is screened again: the machine's addresses change", () => {
  const own: string[] = [];
  const memo = resolutions(own);
  const input: CaptureInput = { url: 'http://93.184.216.34/' };
  memo.resolve(input, owner(DEFAULT_PLANS.free));
  own.push('93.184.216.34');
  assert.match(
    errorOf(() => memo.resolve(input, owner(DEFAULT_PLANS.free))),
    /^url_not_allowed/,
  );
  own.pop();
  memo.resolve(input, owner(DEFAULT_PLANS.free));
});

test('requests carrying credentials for the target are not kept', () => {
  const memo = resolutions();
  const plan = owner(DEFAULT_PLANS.pro);
  for (const secret of [
    { http_auth: { username: 'u', password: 'p' } },
    { cookies: [{ name: 'sid', value: 's3cret' }] },
    { headers: [{ name: 'Authorization', value: 'Bearer s3cret' }] },
  ] as Array<Partial<CaptureInput>>) {
    const input = { url: 'https://example.com/', ...secret } as CaptureInput;
    const first = memo.resolve(input, plan);
    const again = memo.resolve(input, plan);
    assert.notEqual(again, first, `${Object.keys(secret)[0]} is resolved anew`);
    assert.equal(again.cacheKey, first.cacheKey);
  }
});

test('a kept resolution cannot be changed by one of its users', () => {
  const memo = resolutions();
  const kept = memo.resolve(
    { url: 'https://example.com/', hide_selectors: ['.ad'] },
    owner(DEFAULT_PLANS.pro),
  );
  assert.throws(() => {
    (kept.render as { width: number }).width = 1;
  }, TypeError);
  assert.throws(() => (kept.render.hideSelectors as string[]).push('.x'), TypeError);
});

test('the kept resolutions are bounded: the least recent goes first', () => {
  const memo = resolutions();
  const plan = owner(DEFAULT_PLANS.free);
  const input = (i: number): CaptureInput => ({ url: `https://example.com/${i}` });
  const first = memo.resolve(input(0), plan);
  const recent = memo.resolve(input(1), plan);
  for (let i = 2; i <= 1_000; i++) {
    memo.resolve(input(i), plan);
    if (i % 100 === 0) memo.resolve(input(1), plan);
  }
  assert.notEqual(memo.resolve(input(0), plan), first, 'the oldest was let go');
  assert.equal(memo.resolve(input(1), plan), recent, 'a recently used one is still kept');
  const long = {
    url: 'https://example.com/',
    hide_selectors: Array.from({ length: 10 }, (_, i) => `.${'x'.repeat(450)}${i}`),
  };
  assert.notEqual(memo.resolve(long, plan), memo.resolve(long, plan), 'a long request is not kept');
});

test('the kept resolutions are bounded in size too', () => {
  const memo = resolutions();
  const plan = owner(DEFAULT_PLANS.free);
  // About 3,700 characters each: 300 of them are more than the bound, far fewer than 1,000.
  const input = (i: number): CaptureInput => ({
    url: `https://example.com/${i}`,
    hide_selectors: Array.from({ length: 8 }, (_, j) => `.${'y'.repeat(450)}${j}`),
  });
  const first = memo.resolve(input(0), plan);
  assert.equal(memo.resolve(input(0), plan), first);
  for (let i = 1; i <= 300; i++) memo.resolve(input(i), plan);
  assert.notEqual(memo.resolve(input(0), plan), first, 'the oldest was let go');
  const last = memo.resolve(input(300), plan);
  assert.equal(memo.resolve(input(300), plan), last);
});
