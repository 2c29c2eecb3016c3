import { describe, expect, it } from "vitest";
import { isIanaZone, nextFireAfter, nextFires, parseCron, requireCron, requireZone } from "./cron-expression.ts";

const fires = (expression: string, zone: string, after: string, n: number) =>
  nextFires(parseCron(expression), zone, new Date(after), n).map((date) => date.toISOString());

describe("the dialect of wire-format M", () => {
  it.each([
    ["* * * * *", "5 fields: seconds 0"],
    ["* * * * * *", "6 fields"],
    ["* * * * * * *", "7 fields"],
    ["0 0 * * * * 2030", "a year"],
    ["0 0 9 * * MON-FRI", "weekday names"],
    ["0 0 9 * * mon,wed,fri", "names in any case"],
    ["0 0 0 1 JAN-MAR *", "month names"],
    ["*/15 * * * * *", "*/n"],
    ["5/20 * * * * *", "a/n"],
    ["0 10-40/10 * * * *", "a-b/n"],
    ["0 0 12 1,15 * *", "lists"],
    ["0 0 0 * * 1", "1 = Sunday"],
    ["0 0 0 * * 7", "7 = Saturday"],
    ["0 0 0 * * 1-7", "every weekday number"],
    ["  0 0 * * *  ", "surrounding blanks"],
  ])("accepts %j (%s)", (expression) => {
    expect(() => parseCron(expression)).not.toThrow();
  });

  it.each([
    ["", "expected 5, 6 or 7 fields, got 0"],
    ["not a cron", "expected 5, 6 or 7 fields, got 3"],
    ["* * * *", "expected 5, 6 or 7 fields, got 4"],
    ["* * * * * * * *", "expected 5, 6 or 7 fields, got 8"],
    ["0 0 * * 0", "day of week: 0 is out of range 1-7"],
    ["0 0 0 * * 8", "day of week: 8 is out of range 1-7"],
    ["60 * * * * *", "seconds: 60 is out of range 0-59"],
    ["0 60 * * * *", "minutes: 60 is out of range 0-59"],
    ["0 0 24 * * *", "hours: 24 is out of range 0-23"],
    ["0 0 0 0 * *", "day of month: 0 is out of range 1-31"],
    ["0 0 0 32 * *", "day of month: 32 is out of range 1-31"],
    ["0 0 0 1 13 *", "month: 13 is out of range 1-12"],
    ["0 0 0 1 1 * 1969", "year: 1969 is out of range 1970-2099"],
    ["*/0 * * * * *", "seconds: step 0 is out of range 1-60"],
    ["0 0 0 ? * *", "day of month: \"?\" is not a value, range or step"],
    ["0 0 0 L * *", "day of month: \"L\" is not a value"],
    ["0 0 0 * * 2#1", "day of week: \"2#1\" is not a value, range or step"],
    ["0 0 0 15W * *", "day of month: \"15W\" is not a value"],
    ["@daily", "expected 5, 6 or 7 fields, got 1"],
    ["0 0 0 * * FRI-MON", "day of week: range FRI-MON runs backwards"],
    ["0 0 0 * * FUN", "day of week: \"FUN\" is not a value"],
    ["0 0 0 * */13 *", "month: step 13 is out of range 1-12"],
  ])("refuses %j with %j", (expression, message) => {
    expect(() => parseCron(expression)).toThrow(message);
  });

  it("answers M's 400 text for a bad expression", () => {
    expect(() => requireCron("0 0 * * 0")).toThrow(expect.objectContaining({
      code: "invalid_argument", message: "invalid cron expression: day of week: 0 is out of range 1-7",
    }));
  });
});

describe("time zones", () => {
  it("takes IANA names only", () => {
    for (const zone of ["UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata"]) expect(isIanaZone(zone), zone).toBe(true);
    for (const zone of ["Mars/Olympus", "+05:00", "", "america/new york", "EST5EDT-nope"]) expect(isIanaZone(zone), zone).toBe(false);
    expect(() => requireZone("Mars/Olympus")).toThrow("invalid timezone: 'Mars/Olympus' (expected an IANA time zone name such as UTC or America/New_York)");
  });
});

describe("next fires", () => {
  it("5 fields fire at second 0 of every minute, 7 stars every second", () => {
    expect(fires("* * * * *", "UTC", "2026-01-01T00:00:30Z", 2)).toEqual(["2026-01-01T00:01:00.000Z", "2026-01-01T00:02:00.000Z"]);
    expect(fires("* * * * * * *", "UTC", "2026-01-01T00:00:30.500Z", 2)).toEqual(["2026-01-01T00:00:31.000Z", "2026-01-01T00:00:32.000Z"]);
  });

  it("numbers weekdays from 1 = Sunday", () => {
    // 2026-12-04 is a Friday.
    expect(fires("0 0 * * 1", "UTC", "2026-12-04T00:00:00Z", 1)).toEqual(["2026-12-06T00:00:00.000Z"]);
    expect(fires("0 0 * * 7", "UTC", "2026-12-04T00:00:00Z", 1)).toEqual(["2026-12-05T00:00:00.000Z"]);
    expect(fires("0 0 * * MON-FRI", "UTC", "2026-12-04T00:00:00Z", 2)).toEqual(["2026-12-07T00:00:00.000Z", "2026-12-08T00:00:00.000Z"]);
  });

  it("steps from a start value", () => {
    expect(fires("5/20 * * * * *", "UTC", "2026-12-04T00:00:00Z", 4)).toEqual([
      "2026-12-04T00:00:05.000Z", "2026-12-04T00:00:25.000Z", "2026-12-04T00:00:45.000Z", "2026-12-04T00:01:05.000Z",
    ]);
  });

  it("computes in the zone and answers in UTC", () => {
    expect(fires("0 0 9 * * *", "America/New_York", "2026-12-04T00:00:00Z", 1)).toEqual(["2026-12-04T14:00:00.000Z"]);
    expect(fires("0 0 9 * * *", "America/New_York", "2026-07-04T00:00:00Z", 1)).toEqual(["2026-07-04T13:00:00.000Z"]);
  });

  it("has no next fire once its last year has passed", () => {
    expect(nextFireAfter(parseCron("0 0 0 1 1 * 2020"), "UTC", new Date("2026-01-01T00:00:00Z"))).toBeNull();
  });
});

describe("DST in America/New_York", () => {
  // 2026-03-08: 02:00 EST jumps to 03:00 EDT (07:00Z). 2026-11-01: 02:00 EDT falls back to 01:00 EST (06:00Z).
  it("fires a wall time inside the spring-forward gap at the first instant after the gap", () => {
    expect(fires("0 30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 2)).toEqual(["2026-03-08T07:00:00.000Z", "2026-03-09T06:30:00.000Z"]);
    // Every 30 minutes: 01:30 EST, then 02:00 and 02:30 (both in the gap) once at 03:00 EDT, then 03:30 EDT.
    expect(fires("0 */30 * * * *", "America/New_York", "2026-03-08T06:10:00Z", 3)).toEqual([
      "2026-03-08T06:30:00.000Z", "2026-03-08T07:00:00.000Z", "2026-03-08T07:30:00.000Z",
    ]);
  });

  it("fires an ambiguous fall-back time once, at its first occurrence", () => {
    expect(fires("0 30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 2)).toEqual(["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
    // 01:00 and 01:30 EDT fire; their repeats in EST do not; 02:00 EST is next.
    expect(fires("0 */30 * * * *", "America/New_York", "2026-11-01T04:50:00Z", 3)).toEqual([
      "2026-11-01T05:00:00.000Z", "2026-11-01T05:30:00.000Z", "2026-11-01T07:00:00.000Z",
    ]);
  });

  it("asked from inside the repeated hour, answers the first wall time after it", () => {
    expect(fires("0 0 * * * *", "America/New_York", "2026-11-01T06:30:00Z", 1)).toEqual(["2026-11-01T07:00:00.000Z"]);
  });
});
