// The Approvals page: every human-review gate waiting on one of the tenant's instances, the same
// gates the instance page shows, in keyset pages (server/approvals.ts, shared with REST GET
// /approvals). A gate is answered through instances.answer, the instance page's own procedure,
// so the inbox checks nothing of its own. Members may read and answer.
import { z } from "zod";
import { UUID_PATTERN } from "../../../engine/model.ts";
import { decodeApprovalCursor, encodeApprovalCursor, listApprovalPage } from "../../approvals.ts";
import { router, tenantProcedure } from "../trpc.ts";

const PAGE = { default: 25, max: 100 };

export const approvalsRouter = router({
  /** One page of waiting gates, most recently updated instance first; pass `next` back as `cursor` for the following one. */
  list: tenantProcedure
    .input(
      z.object({
        /** Only gates of instances of this sequence version. */
        sequenceId: z.string().regex(UUID_PATTERN, "invalid sequence id").optional(),
        cursor: z.string().max(128).nullish(),
        limit: z.int().min(1).max(PAGE.max).default(PAGE.default),
      }),
    )
    .query(async ({ ctx, input }) => {
      const page = await listApprovalPage(ctx.store, {
        sequenceId: input.sequenceId ?? null,
        after: input.cursor ? decodeApprovalCursor(input.cursor) : null,
        limit: input.limit,
      });
      return { items: page.items, next: page.next ? encodeApprovalCursor(page.next) : null };
    }),
});
