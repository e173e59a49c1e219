/**
 * The request-context and emulation options, as the target sees them: `user_agent` and
 * `locale` in the request headers and in the page's navigator, `timezone` in the page's
 * clock, `media_type` in the decoded pixels. Pages are reused between captures, so each
 * option is also checked to be gone from the next capture that does not ask for it, on the
 * same client's page and on another client's.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { RenderOptions } from '../../src/domain/captures/renderer.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import {
  assertColor,
  decodeImage,
  renderOptions,
  startRenderer,
  type TestRenderer,
} from './helpers.ts';

interface Seen {
  userAgent: string;
  acceptLanguage: string;
  /** What the page's script reported. */
  page: { language: string; timeZone: string; print: boolean; date: string } | null;
}

/**
 * The page reports what it sees to /report before its load event: the capture waits for the
 * load event and the network to settle, so the report has arrived when the capture returns.
 */
const REPORTING_PAGE = page(
  '<p>emulation</p>',
  `<style>body{background:rgb(255,255,255)} @media print{body{background:rgb(0,128,0)}}</style>
   <script>
     const seen = {
       language: navigator.language,
       timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
       print: matchMedia('print').matches,
       date: new Date(Date.UTC(2026, 0, 1, 12)).toLocaleString(undefined, { hour: 'numeric', timeZoneName: 'short' }),
     };
     const id = new URLSearchParams(location.search).get('id');
     document.write('<img style="display:none" src="/report?id=' + id + '&seen=' + encodeURIComponent(JSON.stringify(seen)) + '">');
   </script>`,
);

describe('emulation options', () => {
  let site: FixtureSite;
  let t: TestRenderer;
  const seen = new Map<string, Seen>();
  let n = 0;

  const record = (req: IncomingMessage, field: 'document' | 'report') => {
    const url = new URL(req.url ?? '/', 'http://fixture');
    const id = url.searchParams.get('id') ?? '';
    const entry = seen.get(id) ?? { userAgent: '', acceptLanguage: '', page: null };
    if (field === 'document') {
      entry.userAgent = req.headers['user-agent'] ?? '';
      entry.acceptLanguage = req.headers['accept-language'] ?? '';
    } else {
      entry.page = JSON.parse(url.searchParams.get('seen') ?? 'null');
    }
    seen.set(id, entry);
  };

  before(async () => {
    site = await startSite({
      '/page': (req, res) => {
        record(req, 'document');
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(REPORTING_PAGE);
      },
      '/report': (req, res) => {
        record(req, 'report');
        res.writeHead(204).end();
      },
    });
    t = await startRenderer({ concurrency: 1 });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  /** One capture for `client`; what the target saw of it, and the decoded image. */
  const capture = async (client: string, options: Partial<RenderOptions>) => {
    const id = String(++n);
    const result = await t.renderer.render(
      renderOptions({ url: `${site.origin}/page?id=${id}`, ...options }),
      { deadline: Date.now() + 30_000, client: { id: client, maxConcurrent: 1 } },
    );
    const entry = seen.get(id);
    assert.ok(entry?.page, `the page of capture ${id} did not report`);
    return {
      seen: entry as Seen & { page: NonNullable<Seen['page']> },
      image: decodeImage(result.image),
    };
  };

  it('sends user_agent and locale, and sets timezone and media_type, in one capture', async () => {
    const { seen: s, image } = await capture('a', {
      userAgent: 'ShotsmithTest/1.0 (like a phone)',
      locale: 'de-DE',
      timezone: 'Asia/Tokyo',
      mediaType: 'print',
    });
    assert.equal(s.userAgent, 'ShotsmithTest/1.0 (like a phone)');
    assert.match(s.acceptLanguage, /^de-DE\b/);
    assert.equal(s.page.language, 'de-DE');
    assert.equal(s.page.timeZone, 'Asia/Tokyo');
    // 12:00 UTC is 21:00 in Tokyo, written the German way.
    assert.match(s.page.date, /^21 Uhr/);
    assert.equal(s.page.print, true);
    assertColor(image, 390, 290, [0, 128, 0], 'print media');
  });

  it('leaves nothing of them for the next capture, of the same client or another', async () => {
    await capture('a', {
      userAgent: 'Leaky/1.0',
      locale: 'fr',
      timezone: 'America/Lima',
      mediaType: 'print',
    });
    for (const client of ['a', 'b']) {
      const { seen: s, image } = await capture(client, {});
      assert.match(s.userAgent, /Chrome\//, `${client}: ${s.userAgent}`);
      assert.doesNotMatch(s.userAgent, /Leaky/);
      assert.doesNotMatch(s.acceptLanguage, /fr/);
      assert.equal(s.page.language, 'en-US');
      // The default clock is UTC, whatever the machine's.
      assert.equal(s.page.timeZone, 'UTC');
      assert.equal(s.page.print, false);
      assertColor(image, 390, 290, [255, 255, 255], `${client}: screen media`);
    }
  });

  it('a single-page PDF leaves neither its paper width nor print media to the next capture', async () => {
    // The same size before and after: what the page's session already holds is not sent again
    // (emulation-state.ts), so the PDF's own layout must not pass for it.
    const size = { width: 1100, height: 700 };
    const before = await capture('a', size);
    assert.equal(before.image.width, 1100);
    const pdf = await t.renderer.render(
      renderOptions({
        url: `${site.origin}/page?id=${++n}`,
        ...size,
        format: 'pdf',
        pdfSinglePage: true,
      }),
      { deadline: Date.now() + 30_000, client: { id: 'a', maxConcurrent: 1 } },
    );
    assert.equal(pdf.image.subarray(0, 5).toString('latin1'), '%PDF-');
    const after = await capture('a', size);
    assert.equal(after.image.width, 1100);
    assert.equal(after.image.height, 700);
    assert.equal(after.seen.page.print, false);
    assertColor(after.image, 390, 290, [255, 255, 255], 'screen media after the PDF');
  });

  it('keeps the other emulation when only the locale is given', async () => {
    const { seen: s } = await capture('a', { locale: 'ja' });
    assert.match(s.userAgent, /Chrome\//, `user agent with only a locale: "${s.userAgent}"`);
    assert.match(s.acceptLanguage, /^ja\b/);
    assert.equal(s.page.language, 'ja');
  });
});
