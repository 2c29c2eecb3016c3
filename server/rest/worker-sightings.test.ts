import { describe, expect, it } from "vitest";
import { SIGHTING_REFRESH_MS, WorkerSightings } from "./worker-sightings.ts";

describe("worker sightings", () => {
  it("writes a sighting once per refresh interval, each distinct one at once", () => {
    const sightings = new WorkerSightings();
    expect(sightings.due(["acme", "w1", "charge", null, null], 0)).toBe(true);
    expect(sightings.due(["acme", "w1", "charge", null, null], SIGHTING_REFRESH_MS - 1)).toBe(false);
    expect(sightings.due(["acme", "w1", "refund", null, null], 1)).toBe(true);
    expect(sightings.due(["acme", "w1", "charge", null, "1.2"], 1)).toBe(true);
    expect(sightings.due(["acme", "w1", "charge", null, null], SIGHTING_REFRESH_MS)).toBe(true);
  });
});
