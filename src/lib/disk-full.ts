/**
 * Codes of a write that found no room: the disk, or the user's quota on it, is full (errno),
 * or PostgreSQL's own disk is (SQLSTATE 53100 disk_full).
 */
const NO_ROOM = new Set(['ENOSPC', 'EDQUOT', '53100']);
/** SQLite's primary result code SQLITE_FULL ("database or disk is full"). */
const SQLITE_FULL = 13;

/**
 * Whether `err` (or an error it was caused by) is a write that failed for lack of space: the
 * disk's ENOSPC or EDQUOT, SQLite's SQLITE_FULL (node:sqlite's `errcode`, its extended codes
 * included) or PostgreSQL's disk_full. Such a failure passes once space is freed: a 503,
 * never a 500.
 */
export function isDiskFull(err: unknown): boolean {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    const { code, errcode } = e as { code?: unknown; errcode?: unknown };
    if (typeof code === 'string' && NO_ROOM.has(code)) return true;
    if (typeof errcode === 'number' && (errcode & 0xff) === SQLITE_FULL) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
