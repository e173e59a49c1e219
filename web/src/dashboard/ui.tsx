import { type ReactNode, useCallback, useEffect, useRef, useState } from 'react';
import { takeFocusRequest } from './router.tsx';

/** The page's h1; it takes focus after a client-side navigation and names the tab. */
export function PageTitle({ children, title }: { children: ReactNode; title: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Shotsmith`;
    if (takeFocusRequest()) ref.current?.focus();
  }, [title]);
  return (
    <h1 ref={ref} tabIndex={-1} className="page-title">
      {children}
    </h1>
  );
}

export type Tone = 'info' | 'success' | 'warning' | 'error';

export function Notice({
  tone = 'info',
  children,
  live = tone === 'error' ? 'alert' : 'status',
  onDismiss,
}: {
  tone?: Tone;
  children: ReactNode;
  live?: 'alert' | 'status' | 'none';
  onDismiss?: () => void;
}) {
  return (
    <div className={`notice tone-${tone}`} role={live === 'none' ? undefined : live}>
      <div className="notice-body">{children}</div>
      {onDismiss && (
        <button type="button" className="btn-icon" onClick={onDismiss} aria-label="Dismiss">
          ×
        </button>
      )}
    </div>
  );
}

/** A line of placeholder text of about `width` characters. */
export function SkeletonText({ width = 12 }: { width?: number }) {
  return (
    <span className="skeleton skeleton-text" aria-hidden="true">
      {'\u00a0'.repeat(width)}
    </span>
  );
}

export interface Resource<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads data for a page; `reload` fetches again and keeps showing the old data meanwhile, so
 * a refresh never empties the page.
 */
export function useResource<T>(load: (signal: AbortSignal) => Promise<T>, key = ''): Resource<T> {
  const [state, setState] = useState<{ data: T | null; error: string | null; loading: boolean }>({
    data: null,
    error: null,
    loading: true,
  });
  const [version, setVersion] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  // biome-ignore lint/correctness/useExhaustiveDependencies: version and key trigger reloads.
  useEffect(() => {
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    loadRef.current(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ data, error: null, loading: false });
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        const message = err instanceof Error ? err.message : 'Loading failed.';
        setState((s) => ({ ...s, error: message, loading: false }));
      },
    );
    return () => controller.abort();
  }, [version, key]);

  const reload = useCallback(() => setVersion((v) => v + 1), []);
  return { ...state, reload };
}

/** One page of a cursor listing (GET /v1/account/screenshots, /v1/account/monitors). */
export interface CursorPage<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface CursorPages<T> {
  /** The first page, as useResource reads it. */
  first: Resource<CursorPage<T>>;
  /** Every item of the pages read so far, in order. */
  items: T[];
  /** Whether a page follows the last one read. */
  hasMore: boolean;
  moreBusy: boolean;
  moreError: string | null;
  /** Reads the page after the last one and appends it. */
  loadMore(): Promise<void>;
  /** Reads the first page again and forgets the later ones. */
  reload(): void;
}

/**
 * A listing read page by page: the first page on mount, later ones appended by "Show more"
 * (MoreButton). `read` is given the cursor of the page to read (null: the first).
 */
export function useCursorPages<T>(
  read: (cursor: string | null, signal?: AbortSignal) => Promise<CursorPage<T>>,
): CursorPages<T> {
  const first = useResource((signal) => read(null, signal));
  const [more, setMore] = useState<CursorPage<T>[]>([]);
  const [moreBusy, setMoreBusy] = useState(false);
  const [moreError, setMoreError] = useState<string | null>(null);
  const pages = first.data ? [first.data, ...more] : [];
  const last = pages.at(-1);

  async function loadMore() {
    if (!last?.next_cursor) return;
    setMoreBusy(true);
    setMoreError(null);
    try {
      const page = await read(last.next_cursor);
      setMore((m) => [...m, page]);
    } catch (err) {
      setMoreError(err instanceof Error ? err.message : 'Loading failed.');
    } finally {
      setMoreBusy(false);
    }
  }

  const { reload: reloadFirst } = first;
  const reload = useCallback(() => {
    setMore([]);
    reloadFirst();
  }, [reloadFirst]);

  return {
    first,
    items: pages.flatMap((p) => p.data),
    hasMore: last?.has_more ?? false,
    moreBusy,
    moreError,
    loadMore,
    reload,
  };
}

/** "Show more" under a listing: reads its next page. */
export function MoreButton({
  busy,
  onClick,
  label = 'Show more',
  small = false,
}: {
  busy: boolean;
  onClick: () => void;
  label?: string;
  small?: boolean;
}) {
  return (
    <button
      type="button"
      className={small ? 'btn btn-secondary btn-small' : 'btn btn-secondary'}
      onClick={onClick}
      disabled={busy}
    >
      {busy ? 'Loading…' : label}
    </button>
  );
}
