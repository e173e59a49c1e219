import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { navigationError, netErrorCode } from './net-errors.ts';

describe('navigationError', () => {
  const url = 'http://example.test:8080/path';

  it('extracts the code from a puppeteer navigation error', () => {
    assert.equal(
      netErrorCode('net::ERR_CONNECTION_REFUSED at http://x/'),
      'ERR_CONNECTION_REFUSED',
    );
    assert.equal(netErrorCode('Navigation timeout of 30000 ms exceeded'), null);
  });

  it('maps network failures to target_unreachable naming the host', () => {
    for (const [code, reason] of [
      ['ERR_NAME_NOT_RESOLVED', 'DNS'],
      ['ERR_CONNECTION_REFUSED', 'connection refused'],
      ['ERR_CONNECTION_RESET', 'connection reset'],
      ['ERR_EMPTY_RESPONSE', 'empty response'],
      ['ERR_TOO_MANY_REDIRECTS', 'too many redirects'],
      ['ERR_CERT_AUTHORITY_INVALID', 'TLS certificate error'],
      ['ERR_SSL_PROTOCOL_ERROR', 'TLS'],
      ['ERR_SOMETHING_NEW', 'ERR_SOMETHING_NEW'],
    ] as const) {
      const err = navigationError(code, url, { download: null });
      assert.equal(err.code, 'target_unreachable', code);
      assert.ok(err.message.startsWith('could not reach example.test:8080: '), err.message);
      assert.ok(err.message.includes(reason), `${code}: ${err.message}`);
    }
  });

  it('a refused redirect scheme is url_not_allowed; an aborted download is unreachable', () => {
    assert.equal(
      navigationError('ERR_UNSAFE_REDIRECT', url, { download: null }).code,
      'url_not_allowed',
    );
    const download = navigationError('ERR_ABORTED', url, { download: 'attachment' });
    assert.equal(download.code, 'target_unreachable');
    assert.match(download.message, /download/);
    // The headless shell has no PDF viewer: a PDF is a denied download there, and says so.
    const pdf = navigationError('ERR_ABORTED', url, { download: 'pdf' });
    assert.equal(pdf.code, 'target_unreachable');
    assert.match(pdf.message, /^example\.test:8080 answered with a PDF file, not a page/);
  });
});
