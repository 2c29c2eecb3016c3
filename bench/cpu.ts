// CPU time spent across a benchmark's timed window, on both sides of the wire: this process (the
// engine or the peer's runner, garbage collection and libuv threads included) and the PostgreSQL
// cluster (every server process, and those that exited meanwhile, which the postmaster reaped).
// Read from /proc: on another OS the PostgreSQL figure is NaN.
import fs from "node:fs";

/** USER_HZ: /proc/<pid>/stat counts in these. */
const TICK_MS = 10;

function postgresCpuMs(): number {
  let ticks = 0;
  let dirs: string[];
  try {
    dirs = fs.readdirSync("/proc");
  } catch {
    return NaN;
  }
  for (const pid of dirs) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    const command = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    if (!command.startsWith("postgres")) continue;
    // utime, stime, and the children's cutime and cstime (the postmaster's reaped backends).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return ticks * TICK_MS;
}

/** One process's CPU so far (utime + stime), ms. */
export function processCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

export interface CpuUse {
  /** This process, ms. */
  processMs: number;
  /** Every PostgreSQL process, ms (10 ms resolution). */
  postgresMs: number;
}

/** Starts measuring; the returned function gives the CPU used since. */
export function cpuMeter(): () => CpuUse {
  const process0 = process.cpuUsage();
  const postgres0 = postgresCpuMs();
  return () => {
    const used = process.cpuUsage(process0);
    return { processMs: (used.user + used.system) / 1000, postgresMs: postgresCpuMs() - postgres0 };
  };
}
