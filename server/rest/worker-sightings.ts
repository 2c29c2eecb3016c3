// How often a poll writes its worker's registration (GET /workers): at most once per
// SIGHTING_REFRESH_MS for the same tenant, worker, handler, queue and version in one web process.
// A worker polling every 100 ms would otherwise add a write to every poll, the empty ones too;
// `last_seen_at` is then at most that much behind, against an `alive_within_secs` of 60 by default.
export const SIGHTING_REFRESH_MS = 5_000;
/** Past this many remembered sightings the memory is dropped whole: the cost is one write each. */
const MAX_SIGHTINGS = 10_000;

export class WorkerSightings {
  private readonly writtenAt = new Map<string, number>();

  /** Whether this sighting should be written now; true marks it written. */
  due(key: readonly unknown[], now = Date.now()): boolean {
    const id = JSON.stringify(key);
    const at = this.writtenAt.get(id);
    if (at !== undefined && now - at < SIGHTING_REFRESH_MS) return false;
    if (this.writtenAt.size >= MAX_SIGHTINGS) this.writtenAt.clear();
    this.writtenAt.set(id, now);
    return true;
  }
}
