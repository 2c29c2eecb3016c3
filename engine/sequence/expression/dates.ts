// Timestamps for `format_date` and `day_of_week`: RFC 3339 parsing and a strftime subset.

export interface Timestamp {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** Minutes east of UTC. */
  offset: number;
  /** Seconds since the Unix epoch. */
  epochSeconds: number;
  /** 0 = Sunday, in the timestamp's own offset. */
  weekday: number;
  /** 1-based day of the year. */
  yearDay: number;
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2}))?$/;

/** RFC 3339 (fractional seconds are accepted and ignored), or a bare date as midnight UTC. */
export function parseTimestamp(text: string): Timestamp | undefined {
  if (text.length > 40) return undefined;
  const match = TIMESTAMP.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const zone = match[7] ?? "Z";
  const zoned = zone !== "Z" && zone !== "z";
  const zoneHours = zoned ? Number(zone.slice(1, 3)) : 0;
  const zoneMinutes = zoned ? Number(zone.slice(4, 6)) : 0;
  if (hour > 23 || minute > 59 || second > 59 || zoneHours > 23 || zoneMinutes > 59) return undefined;
  const offset = (zone[0] === "-" ? -1 : 1) * (zoneHours * 60 + zoneMinutes);
  // setUTCFullYear, because Date.UTC maps years 0–99 to 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined; // e.g. 02-30
  const startOfYear = new Date(0);
  startOfYear.setUTCFullYear(year, 0, 1);
  const yearDay = Math.round((date.getTime() - startOfYear.getTime()) / 86_400_000) + 1;
  const weekday = date.getUTCDay();
  date.setUTCHours(hour, minute, second, 0);
  return { year, month, day, hour, minute, second, offset, epochSeconds: (date.getTime() - offset * 60_000) / 1000, weekday, yearDay };
}

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const pad = (number: number, width = 2, fill = "0") => String(number).padStart(width, fill);

export function formatTimestamp(t: Timestamp, format: string): string | null {
  if (format.length > 1000) return null;
  const offsetText = (colon: boolean) => {
    const sign = t.offset < 0 ? "-" : "+";
    const minutes = Math.abs(t.offset);
    return `${sign}${pad(Math.floor(minutes / 60))}${colon ? ":" : ""}${pad(minutes % 60)}`;
  };
  let out = "";
  for (let index = 0; index < format.length; index++) {
    const char = format[index];
    if (char !== "%") {
      out += char;
      continue;
    }
    let directive = format[++index];
    if (directive === ":" && format[index + 1] === "z") {
      directive = ":z";
      index++;
    }
    switch (directive) {
      case "Y": out += pad(t.year, 4); break;
      case "y": out += pad(t.year % 100); break;
      case "m": out += pad(t.month); break;
      case "d": out += pad(t.day); break;
      case "e": out += pad(t.day, 2, " "); break;
      case "H": out += pad(t.hour); break;
      case "I": out += pad(t.hour % 12 === 0 ? 12 : t.hour % 12); break;
      case "p": out += t.hour < 12 ? "AM" : "PM"; break;
      case "M": out += pad(t.minute); break;
      case "S": out += pad(t.second); break;
      case "j": out += pad(t.yearDay, 3); break;
      case "a": out += (DAYS[t.weekday] as string).slice(0, 3); break;
      case "A": out += DAYS[t.weekday] as string; break;
      case "b": out += (MONTHS[t.month - 1] as string).slice(0, 3); break;
      case "B": out += MONTHS[t.month - 1] as string; break;
      case "u": out += t.weekday === 0 ? 7 : t.weekday; break;
      case "w": out += t.weekday; break;
      case "F": out += `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}`; break;
      case "T": out += `${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}`; break;
      case "z": out += offsetText(false); break;
      case ":z": out += offsetText(true); break;
      case "s": out += t.epochSeconds; break;
      case "%": out += "%"; break;
      default: return null;
    }
  }
  return out;
}
