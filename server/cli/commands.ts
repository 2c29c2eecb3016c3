// `npm run bulkhead -- <command>`: provisioning and scripting. Each command prints what it did;
// a secret, when there is one, is the last line of standard output so scripts can `tail -n1`.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { AppError } from "../../engine/errors.ts";
import type { EngineConfig } from "../../engine/config.ts";
import type { Storage } from "../../engine/storage/index.ts";
import { createApiKey } from "../control/api-keys.ts";
import { recordAudit } from "../control/audit.ts";
import { createTenant, listTenants } from "../control/tenants.ts";
import { addMember, createUser, type Role } from "../control/users.ts";
import type { Prisma } from "../db/prisma.ts";

export interface CliDeps {
  prisma: Prisma;
  storage: Storage;
  config: EngineConfig;
  print: (line: string) => void;
}

export const USAGE = `usage: npm run bulkhead -- <command>

  tenants create <slug> [--name N]
  tenants list
  users create <email> --password P [--name N] [--operator]
  members add <tenant> <email> --role admin|member
  api-keys create <tenant> [--name N]
  api-keys create --operator [--name N]`;

type Command = (args: string[], deps: CliDeps) => Promise<void>;

function parse(args: string[], options: ParseArgsConfig["options"], positionals: string[]) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new AppError("invalid_argument", (error as Error).message);
  }
  if (parsed.positionals.length !== positionals.length) {
    throw new AppError("invalid_argument", `expected ${positionals.map((p) => `<${p}>`).join(" ") || "no arguments"}`);
  }
  return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals };
}

const commands: Record<string, Command> = {
  async "tenants create"(args, { prisma, config, print }) {
    const { values, positionals } = parse(args, { name: { type: "string" } }, ["slug"]);
    const tenant = await createTenant(prisma, {
      slug: positionals[0]!,
      name: values.name as string | undefined,
      backendId: config.BULKHEAD_DEFAULT_BACKEND,
    });
    await recordAudit(prisma, { actor: "cli", tenantId: tenant.id, action: "tenant.create", details: { name: tenant.name } });
    print(`created tenant ${tenant.id} (${tenant.name}) on backend ${config.BULKHEAD_DEFAULT_BACKEND}, epoch 1`);
  },

  async "tenants list"(args, { prisma, print }) {
    parse(args, {}, []);
    for (const t of await listTenants(prisma)) {
      print(`${t.id}\t${t.name}\t${t.backendId ?? "-"}@${t.epoch ?? "-"}\t${t.memberCount} members`);
    }
  },

  async "users create"(args, { prisma, print }) {
    const { values, positionals } = parse(
      args,
      { password: { type: "string" }, name: { type: "string" }, operator: { type: "boolean" } },
      ["email"],
    );
    if (typeof values.password !== "string") throw new AppError("invalid_argument", "--password is required");
    const user = await createUser(prisma, {
      email: positionals[0]!,
      password: values.password,
      name: values.name as string | undefined,
      isOperator: values.operator === true,
    });
    await recordAudit(prisma, { actor: "cli", action: "user.create", details: { email: user.email, operator: values.operator === true } });
    print(`created ${values.operator ? "operator" : "user"} ${user.email}`);
  },

  async "members add"(args, { prisma, print }) {
    const { values, positionals } = parse(args, { role: { type: "string" } }, ["tenant", "email"]);
    if (typeof values.role !== "string") throw new AppError("invalid_argument", "--role admin|member is required");
    const [tenantId, email] = positionals as [string, string];
    await addMember(prisma, { tenantId, email, role: values.role as Role });
    await recordAudit(prisma, { actor: "cli", tenantId, action: "member.add", details: { email, role: values.role } });
    print(`${email} is now ${values.role} of ${tenantId}`);
  },

  async "api-keys create"(args, { prisma, print }) {
    const operator = args.includes("--operator");
    const { values, positionals } = parse(args, { name: { type: "string" }, operator: { type: "boolean" } }, operator ? [] : ["tenant"]);
    const tenantId = operator ? null : positionals[0]!;
    const key = await createApiKey(prisma, { tenantId, name: values.name as string | undefined });
    await recordAudit(prisma, { actor: "cli", tenantId, action: "api_key.create", details: { prefix: key.prefix, operator } });
    print(`created ${operator ? "operator" : `tenant ${tenantId}`} API key ${key.prefix}… (the secret is shown once, below)`);
    print(key.secret);
  },
};

/** Runs one CLI command; returns the process exit status. Errors are one line on `printError`. */
export async function runCli(argv: string[], deps: CliDeps, printError: (line: string) => void): Promise<number> {
  const name = argv.slice(0, 2).join(" ");
  const command = commands[name];
  if (!command) {
    printError(argv.length ? `error: unknown command "${name}"\n${USAGE}` : USAGE);
    return 1;
  }
  try {
    await command(argv.slice(2), deps);
    return 0;
  } catch (error) {
    if (error instanceof AppError) {
      printError(`error: ${error.message}`);
      return 1;
    }
    throw error;
  }
}
