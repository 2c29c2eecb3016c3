// Helpers for pages (React Server Components): who is signed in, and a tRPC caller acting as
// them, so pages answer exactly what the API answers.
import { redirect } from "next/navigation";
import { createCaller } from "../api/root.ts";
import { createContext } from "../api/trpc.ts";
import { auth } from "../auth/index.ts";
import { services } from "../services.ts";

/** The caller for the signed-in user; visitors go to sign-in and come back afterwards. */
export async function signedInCaller(returnTo: string) {
  const session = await auth();
  if (!session?.user?.id) redirect(`/signin?callbackUrl=${encodeURIComponent(returnTo)}`);
  return createCaller(createContext(services(), session.user.id));
}
