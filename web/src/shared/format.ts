/** Dates, numbers and plan facts as people read them, in the browser's locale. */

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, {
  dateStyle: 'medium',
  timeStyle: 'short',
});
const shortDay = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  timeZone: 'UTC',
});
const numberFormat = new Intl.NumberFormat();
const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export const formatDate = (iso: string): string => dateFormat.format(new Date(iso));
export const formatDateTime = (iso: string): string => dateTimeFormat.format(new Date(iso));
/** A UTC day key (YYYY-MM-DD) as "Nov 3". */
export const formatDay = (day: string): string => shortDay.format(new Date(`${day}T00:00:00Z`));
export const formatNumber = (n: number): string => numberFormat.format(n);

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1_000],
];

/** "in 3 hours", "5 minutes ago", relative to now. */
export function formatRelative(iso: string, now = Date.now()): string {
  const diff = new Date(iso).getTime() - now;
  for (const [unit, ms] of UNITS) {
    if (Math.abs(diff) >= ms || unit === 'second') {
      return relativeFormat.format(Math.round(diff / ms), unit);
    }
  }
  return relativeFormat.format(0, 'second');
}

export function formatPrice(cents: number): string {
  if (cents === 0) return '$0';
  const dollars = cents / 100;
  return `$${Number.isInteger(dollars) ? dollars : dollars.toFixed(2)}`;
}

export function formatRetention(hours: number): string {
  if (hours % 24 === 0 && hours > 24) return `${hours / 24} days`;
  return hours === 1 ? '1 hour' : `${hours} hours`;
}

export const planLabel = (name: string): string =>
  name === 'pro' ? 'Pro' : name === 'free' ? 'Free' : name === 'demo' ? 'Demo' : name;

/** "https://example.com/a" -> "example.com/a", for compact display. */
export const shortUrl = (url: string): string => url.replace(/^https?:\/\//, '').replace(/\/$/, '');

/** "example.com" is what people type; the API wants an absolute URL. */
export function normalizeUrl(input: string): string {
  const trimmed = input.trim();
  if (trimmed === '' || /^[a-z][a-z0-9+.-]*:/i.test(trimmed)) return trimmed;
  return `https://${trimmed}`;
}
