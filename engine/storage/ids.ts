// Time-ordered ids (UUIDv7, as Orch8 mints them): new rows land at the end of the primary key
// index, and ids minted in one process sort in the order they were minted, which is how rows
// written in one statement (a step's output and a loop's marker) keep their order for readers
// that sort by (created_at, id).
import { randomFillSync } from "node:crypto";

let lastMs = 0;
let sequence = 0;

// Random bytes drawn 4 KiB at a time: a randomBytes call per id was a fiftieth of the engine's CPU
// in the throughput bench.
const randomPool = Buffer.alloc(4096);
let randomOffset = randomPool.length;

function randomSixteen(): Buffer {
  if (randomOffset + 16 > randomPool.length) {
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  const bytes = Buffer.allocUnsafe(16);
  randomPool.copy(bytes, 0, randomOffset, randomOffset + 16);
  randomOffset += 16;
  return bytes;
}

export function uuidv7(now = Date.now()): string {
  // Within one millisecond a 12-bit counter in rand_a keeps ids increasing (RFC 9562, method 1).
  if (now <= lastMs) {
    sequence += 1;
    if (sequence > 0xfff) {
      lastMs += 1;
      sequence = 0;
    }
  } else {
    lastMs = now;
    sequence = 0;
  }
  const bytes = randomSixteen();
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

declare const tenantIdBrand: unique symbol;
/**
 * A tenant id that came from a trusted source: a routed placement, a claimed row, a checked
 * membership or API key. Tenant-scoped storage takes only this, so a raw string from a request
 * cannot reach a tenant's rows without passing one of those doors.
 */
export type TenantId = string & { readonly [tenantIdBrand]: true };

/** Marks an id as a tenant's; for the doors named above (and tests), nowhere else. */
export const asTenantId = (id: string) => id as TenantId;
