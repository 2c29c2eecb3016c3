/** The list's input as the page's first read and the view ask it: absent when nothing is filtered. */
export function opsBreakersInput(tenant: string, handler: string): { tenant?: string; handler?: string } | undefined {
  if (!tenant && !handler) return undefined;
  return { ...(tenant ? { tenant } : {}), ...(handler ? { handler } : {}) };
}
