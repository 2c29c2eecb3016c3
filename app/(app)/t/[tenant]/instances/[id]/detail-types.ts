import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../../../../../server/api/root.ts";

/** What `instances.get` answers, as the detail page's components receive it. */
export type InstanceDetailData = inferRouterOutputs<AppRouter>["instances"]["get"];

/** One block of the execution tree, with its runs and what its definition says. */
export type DetailNode = InstanceDetailData["nodes"][number];

export type DetailAttempt = DetailNode["attempts"][number];

/** A step error as the page receives it (message, code, retryable, handler, HTTP status). */
export type WireError = NonNullable<DetailNode["error"]>;
