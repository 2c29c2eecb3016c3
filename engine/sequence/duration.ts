// Durations on the wire (wire-format "General wire conventions"): a JSON integer is milliseconds,
// a JSON float is seconds (`1.5` = 1500 ms). Negative values are rejected.
//
// Limitation: after JSON.parse, `3000.0` and `3000` are the same JS number, so a float written with
// a zero fraction cannot be told apart from an integer; it reads as milliseconds (3 s, where Orch8,
// which sees the raw token, reads 50 min). Only a number with a fractional part is taken as seconds.
// Clients that want seconds should send a fraction or, better, integer milliseconds.
import { z } from "zod";

/** A wire duration, parsed to integer milliseconds. */
export const durationMs = z
  .number()
  .min(0, "duration must be non-negative")
  .transform((value) => {
    // Rounded, not truncated: 1.005 s is 1004.999… ms in binary floating point.
    const ms = Number.isInteger(value) ? value : Math.round(value * 1000);
    // Clamped like Orch8 clamps to u64::MAX, so timers never see an imprecise or infinite value.
    return Math.min(ms, Number.MAX_SAFE_INTEGER);
  });
