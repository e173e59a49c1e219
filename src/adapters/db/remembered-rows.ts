import { LRUCache } from 'lru-cache';
import type { DirectSqlite } from './node-sqlite.ts';

/**
 * Rows a SQLite node keeps between requests (ARCHITECTURE.md, "Remembered rows"), each with
 * the connection's version (`DirectSqlite.version`) when it was read. An entry is used only
 * while that version holds: no statement of this connection has written to the remembered
 * tables (the connection sees every statement it runs) and no other connection has committed
 * anything (SQLite's `data_version`). So what `get` answers is what `read` would read now.
 * PostgreSQL nodes, whose database other nodes write to unseen, remember nothing.
 */
export interface RememberedRows<V> {
  /**
   * The remembered value for `id`, else `read()`'s (remembered unless null). Outside
   * transactions only (`direct.available()`): a version read inside one could see its
   * uncommitted writes.
   */
  get(id: string, read: () => V | null): V | null;
}

export function rememberedRows<V extends object>(
  direct: DirectSqlite,
  bounds: { max: number; sized?: { maxSize: number; size: (value: V) => number } },
): RememberedRows<V> {
  const { sized } = bounds;
  const rows = new LRUCache<string, { version: number; value: V }>({
    max: bounds.max,
    ...(sized
      ? { maxSize: sized.maxSize, sizeCalculation: (entry) => Math.max(1, sized.size(entry.value)) }
      : {}),
  });
  return {
    get(id, read) {
      const version = direct.version();
      const kept = rows.get(id);
      if (kept !== undefined && kept.version === version) return kept.value;
      const value = read();
      if (value === null) rows.delete(id);
      else rows.set(id, { version, value });
      return value;
    },
  };
}
