// Wall-clock arithmetic in IANA timezones with nothing but `Intl.DateTimeFormat`. Local times are
// plain fields; turning them into instants goes through the zone's real offsets, so a DST change
// shifts the result by the zone's rules instead of by a fixed 24 h.

/** A wall-clock reading in some zone. `month` is 1-12. */
export interface LocalDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

const DAY_MS = 86_400_000;

// Building a formatter is far more expensive than using one: one per zone, kept for the process.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, format);
  }
  return format;
}

/**
 * The zone itself when the runtime knows it, else UTC. Instance zones are checked at creation;
 * this guards the optional `delay.timezone`, which is not, the way Orch8 does (falls back to UTC).
 */
export function zoneOrUtc(zone: string | null | undefined): string {
  if (!zone) return "UTC";
  try {
    formatter(zone);
    return zone;
  } catch {
    return "UTC";
  }
}

/** The wall-clock time in `zone` at `instantMs`. */
export function toLocal(instantMs: number, zone: string): LocalDateTime {
  const fields: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(instantMs)) {
    if (part.type !== "literal") fields[part.type] = Number(part.value);
  }
  return {
    year: fields.year!,
    month: fields.month!,
    day: fields.day!,
    hour: fields.hour!,
    minute: fields.minute!,
    second: fields.second!,
    millisecond: ((instantMs % 1000) + 1000) % 1000,
  };
}

/** The local fields read as if they were UTC: the "wall-clock epoch" used for offset maths. */
function wallMs(local: LocalDateTime): number {
  return Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second, local.millisecond);
}

/** The zone's offset from UTC (local minus UTC) at `instantMs`. */
function offsetAt(instantMs: number, zone: string): number {
  return wallMs(toLocal(instantMs, zone)) - instantMs;
}

/**
 * The instant at which `zone` reads `local`. A reading that happens twice (clocks going back)
 * gives the earlier instant; one that never happens (clocks going forward) moves forward by the
 * gap (02:30 on a spring-forward night becomes 03:30), as Temporal's "compatible" option does.
 */
export function fromLocal(local: LocalDateTime, zone: string): number {
  const wall = wallMs(local);
  // The offsets in force a day either side cover any one transition near this reading.
  const before = offsetAt(wall - DAY_MS, zone);
  const after = offsetAt(wall + DAY_MS, zone);
  const matches = [...new Set([before, after])]
    .map((offset) => wall - offset)
    .filter((instant) => offsetAt(instant, zone) === wall - instant)
    .sort((a, b) => a - b);
  return matches[0] ?? wall - before;
}

/** The calendar date `days` after the date of `local` (time fields kept), by the calendar. */
export function addDays(local: LocalDateTime, days: number): LocalDateTime {
  const date = new Date(Date.UTC(local.year, local.month - 1, local.day + days));
  return { ...local, year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

/** Day of the week of the local date, 0 = Monday ... 6 = Sunday (the send-window numbering). */
export function weekday(local: LocalDateTime): number {
  return (new Date(Date.UTC(local.year, local.month - 1, local.day)).getUTCDay() + 6) % 7;
}

/** "YYYY-MM-DD" of the local date, as holidays are written. */
export function isoDate(local: LocalDateTime): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return `${pad(local.year, 4)}-${pad(local.month)}-${pad(local.day)}`;
}

const LOCAL_ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?$/;

/** Parses a local ISO date-time ("2025-03-30T09:00:00", seconds optional, no offset); null if not one. */
export function parseLocalDateTime(text: string): LocalDateTime | null {
  const match = LOCAL_ISO.exec(text.trim());
  if (!match) return null;
  const [, year, month, day, hour, minute, second = "0", fraction = "0"] = match;
  const local: LocalDateTime = {
    year: Number(year),
    month: Number(month),
    day: Number(day),
    hour: Number(hour),
    minute: Number(minute),
    second: Number(second),
    millisecond: Number(fraction.padEnd(3, "0")),
  };
  // Reject dates the calendar does not have (2025-02-30) and hours past 23.
  const roundTrip = addDays(local, 0);
  const valid = roundTrip.month === local.month && roundTrip.day === local.day && local.hour < 24 && local.minute < 60 && local.second < 60;
  return valid ? local : null;
}
