import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../lib/time.ts';
import {
  EVERY,
  EVERY_NAMES,
  htmlDigest,
  imageToken,
  isMonitorId,
  newMonitorId,
  nextRunAt,
  slotOffset,
} from './monitor-rules.ts';

test('a monitor runs at a fixed offset within the first minute of its slot', () => {
  const id = newMonitorId();
  assert.ok(isMonitorId(id));
  const offset = slotOffset(id);
  assert.ok(offset >= 0 && offset < MINUTE_MS);
  assert.equal(slotOffset(id), offset, 'the same offset every time');
  const now = Date.UTC(2026, 10, 28, 10, 7, 30);
  for (const every of EVERY_NAMES) {
    const next = nextRunAt(id, every, now);
    assert.ok(next > now, every);
    assert.ok(next - now <= EVERY[every] + MINUTE_MS, every);
    assert.equal((next - offset) % EVERY[every], 0, `${every}: a slot's start plus the offset`);
  }
});

test('monitors created together spread over the minute', () => {
  const offsets = new Set(
    Array.from({ length: 50 }, () => Math.floor(slotOffset(newMonitorId()) / 1000)),
  );
  assert.ok(offsets.size > 20, `50 monitors took ${offsets.size} distinct seconds`);
});

test('missed slots give one next due time, from now', () => {
  const id = newMonitorId();
  const due = nextRunAt(id, '1h', Date.UTC(2026, 0, 1));
  const afterGap = due + 10 * DAY_MS + 5 * MINUTE_MS;
  const next = nextRunAt(id, '1h', afterGap);
  assert.ok(next > afterGap && next - afterGap <= HOUR_MS);
  // At its due time exactly, the next one is a whole interval later.
  assert.equal(nextRunAt(id, '15m', due) - due, 15 * MINUTE_MS);
});

test("a hosted image URL's token, as a diff's record is found by it", () => {
  const token = 'AbCdEfGhIjKlMnOpQrSt_-';
  assert.equal(imageToken(`https://shots.example.com/images/${token}.png`), token);
  assert.equal(imageToken(`http://127.0.0.1:8080/images/${token}.webp`), token);
  for (const other of [
    `https://shots.example.com/images/${token}`,
    `https://shots.example.com/other/${token}.png`,
    `https://shots.example.com/images/${token}x.png`,
    'https://shots.example.com/images/short.png',
    '',
  ]) {
    assert.equal(imageToken(other), null, other);
  }
});

test("an html monitor's digest: UTF-8 bytes and the hex SHA-256 sha256sum gives", () => {
  assert.deepEqual(htmlDigest(''), {
    bytes: 0,
    sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  });
  const digest = htmlDigest('<p>café</p>');
  assert.equal(digest.bytes, 12, 'é is two bytes');
  assert.match(digest.sha256, /^[0-9a-f]{64}$/);
});
