// Writes docs/rest-api.md from the dispatcher's route table (npm run rest-docs).
import { writeFileSync } from "node:fs";
import { ROUTES } from "../server/rest/routes.ts";
import { routeListMarkdown } from "../server/rest/route-list.ts";

writeFileSync(new URL("../docs/rest-api.md", import.meta.url), routeListMarkdown(ROUTES));
console.log(`docs/rest-api.md: ${ROUTES.length} routes written`);
