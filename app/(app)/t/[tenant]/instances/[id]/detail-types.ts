import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../../../../../server/api/root.ts";

/** What `instances.get` answers, as the detail page's components receive it. */
export type InstanceDetailData = inferRouterOutputs<AppRouter>["instances"]["get"];
