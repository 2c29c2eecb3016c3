// The tenants table's orders and its first page's input, shared by the page (which reads that
// page on the server) and the table (which asks for the next ones).
export type Order = "name" | "slug" | "claims" | "lag";

export const PAGE_SIZE = 50;
export const ORDERS: Record<Order, string> = { name: "Name", slug: "Slug", claims: "Claims, last hour", lag: "Lag p99, last hour" };
const isOrder = (value: string | null): value is Order => value !== null && value in ORDERS;

/** The first page's input for the address's search (`q`) and order (`sort`), as the table starts from them. */
export function firstPageInput(q: string | null, sort: string | null) {
  return { search: (q ?? "").trim(), order: isOrder(sort) ? sort : ("name" as Order), cursor: null, limit: PAGE_SIZE };
}
