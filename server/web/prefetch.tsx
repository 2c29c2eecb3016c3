// First data for a page's client views, read while the page renders: the views' queries find it in
// their cache when they mount, so the browser does not wait for its scripts before asking for it.
import { dehydrate, HydrationBoundary, QueryClient, type FetchQueryOptions, type FetchInfiniteQueryOptions } from "@tanstack/react-query";
import { createTRPCOptionsProxy, type TRPCOptionsProxy } from "@trpc/tanstack-react-query";
import { Suspense, type ReactNode } from "react";
import { appRouter, type AppRouter } from "../api/root.ts";
import { signedInContext } from "./session.ts";

/** Options as `trpc.<procedure>.queryOptions(input)` (or infiniteQueryOptions) make them, with the views' own input. */
export type Prefetch =
  | { kind: "query"; options: FetchQueryOptions<never, never, never, never> }
  | { kind: "infinite"; options: FetchInfiniteQueryOptions<never, never, never, never, never> };

/** A query to read ahead: `query(trpc.x.y.queryOptions(input))`, with the input the view asks with. */
export const query = (options: unknown): Prefetch => ({ kind: "query", options: options as never });
/** An infinite query's first page: `infinite(trpc.x.y.infiniteQueryOptions(input, { getNextPageParam, ... }))`. */
export const infinite = (options: unknown): Prefetch => ({ kind: "infinite", options: options as never });

/** A page's `searchParams` prop. */
export type SearchParams = Promise<Record<string, string | string[] | undefined>>;

/** A page's `searchParams` as the browser's URLSearchParams would read them (the first of a repeated name). */
export async function addressParams(searchParams: SearchParams): Promise<URLSearchParams> {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(await searchParams)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) params.set(name, first);
  }
  return params;
}

/** The queries a page's views ask first (async when they depend on the address, say). */
type Queries = (trpc: TRPCOptionsProxy<AppRouter>) => Prefetch[] | Promise<Prefetch[]>;

/**
 * `children` with the queries' answers in the client's cache. The rest of the page goes out at
 * once, a placeholder in their place (not `children` themselves: their queries would enter the
 * server render's cache empty, and the answers would then be kept out of it); the answers and `children`
 * follow in the same response, read as the signed-in user by the procedures themselves (no HTTP).
 * A query that fails is left out: its view asks for it and shows the error as it would have.
 */
export function Prefetched({ queries, children }: { queries: Queries; children: ReactNode }) {
  return (
    <Suspense fallback={<div className="skeleton" aria-busy="true" aria-label="Loading" />}>
      <Read queries={queries}>{children}</Read>
    </Suspense>
  );
}

async function Read({ queries, children }: { queries: Queries; children: ReactNode }) {
  const queryClient = new QueryClient();
  const trpc = createTRPCOptionsProxy<AppRouter>({ router: appRouter, ctx: await signedInContext(), queryClient });
  await Promise.all((await queries(trpc)).map((q) => (q.kind === "query" ? queryClient.prefetchQuery(q.options) : queryClient.prefetchInfiniteQuery(q.options))));
  // Through JSON, as the views' own requests would bring it (dates as strings).
  const state = JSON.parse(JSON.stringify(dehydrate(queryClient))) as ReturnType<typeof dehydrate>;
  return <HydrationBoundary state={state}>{children}</HydrationBoundary>;
}
