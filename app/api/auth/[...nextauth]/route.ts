import { handlers } from "../../../../server/auth/index.ts";

export const { GET, POST } = handlers;
