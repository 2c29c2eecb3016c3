// Prometheus metrics (text format 0.0.4) for operator API keys: see server/ops/prometheus.ts.
import { handleMetrics } from "../../../server/ops/prometheus.ts";
import { services } from "../../../server/services.ts";

export function GET(request: Request): Promise<Response> {
  return handleMetrics(request, services());
}
