import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "../../../../server/api/root.ts";
import { createContext } from "../../../../server/api/trpc.ts";
import { auth } from "../../../../server/auth/index.ts";
import { services } from "../../../../server/services.ts";

async function handler(req: Request) {
  const session = await auth();
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: () => createContext(services(), session?.user?.id ?? null),
  });
}

export { handler as GET, handler as POST };
