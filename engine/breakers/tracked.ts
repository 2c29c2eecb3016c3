// Which handlers the circuit breakers watch. A breaker is for an external dependency (an HTTP API,
// an LLM provider, an external worker); on a handler with none it only produces false positives:
// a `fail` step in a test suite, or a `send_signal` losing a race with its target, would stall
// every instance of the tenant using that handler for a cooldown.

/**
 * False for the handlers that are never tracked. This is the only list of them, on purpose: it is
 * policy to be reviewed as a set ("which handlers bypass the breaker?"), not a per-handler flag.
 */
export function isTracked(handler: string): boolean {
  switch (handler) {
    case "noop":
    case "log":
    case "sleep":
    case "fail":
    case "self_modify":
    case "emit_event":
    case "send_signal":
    case "query_instance":
    case "human_review":
      return false;
    default:
      return true;
  }
}
