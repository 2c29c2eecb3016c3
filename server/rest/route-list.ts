// docs/rest-api.md, made from the dispatcher's own route table (ROUTES), so the list cannot drift
// from what is served: every route with who may call it, its body's top-level fields (from the
// same zod schema that parses it) and what its 404 is about. `npm run rest-docs` writes it;
// server/rest/route-list.test.ts fails when the file and the table disagree.
import { z } from "zod";
import type { Route } from "./route.ts";

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; required?: string[]; enum?: unknown[]; anyOf?: JsonSchema[]; $ref?: string };

const WHO: Record<Route["access"], string> = {
  public: "anyone (no key)",
  tenant: "tenant key, or operator key with `X-Tenant-Id`",
  operator: "operator key",
};

/** A field's type in a few words: `string`, `integer`, `"a" \| "b"`, `object`, `any`. */
function typeOf(schema: JsonSchema): string {
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(" \\| ");
  if (schema.anyOf) return [...new Set(schema.anyOf.map(typeOf))].join(" \\| ");
  if (schema.$ref) return "object";
  if (Array.isArray(schema.type)) return schema.type.join(" \\| ");
  return schema.type ?? "any";
}

/** The body's top-level fields, required ones first-marked: `name: string*`. */
function bodyFields(route: Route): string {
  if (!route.body) return "—";
  const schema = z.toJSONSchema(route.body.schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(([name, field]) => `\`${name}\`${required.has(name) ? "*" : ""}: ${typeOf(field)}`);
  return fields.length > 0 ? fields.join(", ") : "any JSON";
}

function notFound(route: Route): string {
  if (route.access === "public") return "—";
  return route.missing ? `\`not found: ${route.missing(new Proxy({}, { get: (_, name) => `<${String(name)}>` })).message}\`` : `\`not found: ${route.notFound} not found\``;
}

export function routeListMarkdown(routes: readonly Route[]): string {
  const lines = [
    "# REST API v1: every route",
    "",
    "Generated from the dispatcher's route table (`server/rest/routes.ts`) by `npm run rest-docs`; do not edit by hand.",
    "Paths are relative to `/api/v1`. Shapes, status codes and error texts are those of `spec/wire-format.md` and",
    "`spec/wire-format-more.md` (the wire contract with Orch8). `*` marks a required body field. Every 404 of a route",
    "that acts for a tenant is also its answer for another tenant's object, byte for byte.",
    "",
    "| method | path | who | body | 404 |",
    "|---|---|---|---|---|",
    ...routes.map((route) => `| ${route.method} | \`${route.path}\` | ${WHO[route.access]} | ${bodyFields(route)} | ${notFound(route)} |`),
    "",
  ];
  return lines.join("\n");
}
