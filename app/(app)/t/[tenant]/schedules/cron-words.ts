// A cron expression of wire-format M in words, and times shown in a zone. Browser-safe.
import cronstrue from "cronstrue";

/** The expression in words; null when cronstrue cannot read it (the server has the last word). */
export function cronInWords(expression: string): string | null {
  try {
    // M numbers weekdays 1-7 from Sunday.
    return cronstrue.toString(expression, { dayOfWeekStartIndexZero: false, use24HourTimeFormat: true, verbose: false });
  } catch {
    return null;
  }
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** `iso` on the wall clock of `zone` (undefined: the viewer's own), with the zone's short name, as `locale` writes it (undefined: the viewer's). */
export function timeIn(iso: string, zone?: string, locale?: string): string {
  const key = `${zone ?? ""} ${locale ?? ""}`;
  let format = formats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, { timeZone: zone, weekday: "short", year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });
    formats.set(key, format);
  }
  return format.format(new Date(iso));
}

/** The viewer's IANA zone. */
export const viewerZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

export const OVERLAP_LABELS = {
  allow: "Allow: fire even while an earlier run is active",
  skip: "Skip: skip an occurrence while an earlier run is active",
  buffer_one: "Buffer one: wait for the active run, then fire once",
  cancel_previous: "Cancel previous: cancel active runs, then fire",
} as const;
