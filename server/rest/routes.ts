// The REST v1 route table (wire-format E), relative to /api/v1. Plain data: one row per route,
// read by the dispatcher (index.ts) and by tests that check every route taking an id.
import { createInstance, createInstanceBatch, createInstanceBody, batchBody, getInstance, listBlockOutputs, listInstances } from "./handlers/instances.ts";
import { live, ready } from "./handlers/health.ts";
import { createSequence, getSequence, sequenceBody } from "./handlers/sequences.ts";
import { createTenant, tenantBody } from "./handlers/tenants.ts";
import { defineRoute, type Route } from "./route.ts";

export const ROUTES: readonly Route[] = [
  defineRoute({ method: "GET", path: "/health/live", access: "public", notFound: "route", handle: live }),
  defineRoute({ method: "GET", path: "/health/ready", access: "public", notFound: "route", handle: ready }),
  defineRoute({ method: "POST", path: "/sequences", access: "tenant", notFound: "tenant", body: sequenceBody, handle: createSequence }),
  defineRoute({ method: "GET", path: "/sequences/{id}", access: "tenant", notFound: "sequence", handle: getSequence }),
  defineRoute({ method: "POST", path: "/instances", access: "tenant", notFound: "sequence", body: createInstanceBody, handle: createInstance }),
  defineRoute({ method: "POST", path: "/instances/batch", access: "tenant", notFound: "sequence", body: batchBody, handle: createInstanceBatch }),
  defineRoute({ method: "GET", path: "/instances", access: "tenant", notFound: "tenant", handle: listInstances }),
  defineRoute({ method: "GET", path: "/instances/{id}", access: "tenant", notFound: "instance", handle: getInstance }),
  defineRoute({ method: "GET", path: "/instances/{id}/outputs", access: "tenant", notFound: "instance", handle: listBlockOutputs }),
  defineRoute({ method: "POST", path: "/tenants", access: "operator", notFound: "route", body: tenantBody, handle: createTenant }),
];
