// Writes the resource ledger's table into README.md between its markers (npm run ledger).
import { readFileSync, writeFileSync } from "node:fs";
import { ledgerMarkdown } from "../engine/resources/ledger.ts";
import { README_PATH, withLedger } from "./ledger-readme.ts";

writeFileSync(README_PATH, withLedger(readFileSync(README_PATH, "utf8"), ledgerMarkdown()));
console.log("README.md: resource ledger written");
