// `http_request`: one outbound HTTP call through the SSRF guard.
// Params: { method = GET, url, headers?, body? (string as-is; any other JSON sent as
// application/json), timeout_ms = 30000 }. Output: { status, headers, body }.
import { sendOutbound, statusFailure, type OutboundGuard } from "./outbound-request.ts";
import { HttpRequestParams } from "./http-request-params.ts";
import { parseParams } from "./params.ts";
import { success, type Handler } from "./types.ts";

export function createHttpRequest(guard: OutboundGuard): Handler {
  return async (input) => {
    const parsed = parseParams(HttpRequestParams, input.params);
    if (!parsed.ok) return parsed.outcome;
    const { method, url, headers, body, timeout_ms } = parsed.value;
    let payload: Buffer | undefined;
    if (typeof body === "string") {
      payload = Buffer.from(body);
      headers["content-type"] ??= "text/plain; charset=utf-8";
    } else if (body !== undefined && body !== null) {
      payload = Buffer.from(JSON.stringify(body));
      headers["content-type"] ??= "application/json";
    }
    const started = performance.now();
    const result = await sendOutbound({ tenantId: input.tenantId, method, url, headers, body: payload, timeoutMs: timeout_ms, signal: input.signal }, guard);
    // Host only: paths and queries may carry secrets.
    input.log.debug(
      { block_id: input.blockId, method, host: url.host, status: result.ok ? result.response.status : null, ms: Math.round(performance.now() - started) },
      "http_request",
    );
    if (!result.ok) return { kind: "failure", retryable: result.retryable, message: result.message };
    const { status, headers: responseHeaders, body: responseBody } = result.response;
    return statusFailure(result.response) ?? success({ status, headers: responseHeaders, body: responseBody });
  };
}
