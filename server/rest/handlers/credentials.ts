// Credentials over REST (wire-format N): create, list (by id), get, PATCH, DELETE. No answer ever
// carries a value or a refresh token. Another tenant's credential is one this tenant does not
// have: the same 404, naming the id asked for.
import { z } from "zod";
import { addCredential, changeCredential, CredentialInput, credentialNotFound, CredentialPatch, removeCredential, wireCredential } from "../../credentials.ts";
import { keyActor } from "../auth.ts";
import { countParam, shapedBody } from "../body.ts";
import { empty, json } from "../http.ts";
import { requireTenantHeader, type RestContext } from "../route.ts";

const LIST = { default: 100, max: 1000 };
const NO_TENANT = "credentials belong to one tenant: name it (X-Tenant-Id)";

const CreateBody = CredentialInput.extend({ tenant_id: z.string().optional() });
type CreateBody = z.output<typeof CreateBody>;
export const credentialCreateBody = shapedBody(CreateBody, (body) => [body.tenant_id]);
export const credentialPatchBody = shapedBody(CredentialPatch, () => []);

const by = async (context: RestContext<unknown>) => ({ actor: await keyActor(context.services.prisma, context.principal!) });

export async function createCredential(context: RestContext<CreateBody>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const created = await addCredential(context.services.prisma, store, await by(context), context.body);
  return json(201, wireCredential(store.tenantId, created));
}

export async function listCredentials(context: RestContext<unknown>): Promise<Response> {
  const limit = Math.min(countParam(context.url.searchParams, "limit", LIST.default, 1), LIST.max);
  const store = requireTenantHeader(context, NO_TENANT);
  return json(200, (await store.listCredentials(limit)).map((credential) => wireCredential(store.tenantId, credential)));
}

export async function getCredential(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const id = context.params.credential_id!;
  const credential = await store.getCredential(id);
  if (!credential) throw credentialNotFound(id);
  return json(200, wireCredential(store.tenantId, credential));
}

export async function patchCredential(context: RestContext<CredentialPatch>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const id = context.params.credential_id!;
  const changed = await changeCredential(context.services.prisma, store, await by(context), id, context.body);
  if (!changed) throw credentialNotFound(id);
  return json(200, wireCredential(store.tenantId, changed));
}

export async function deleteCredential(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const id = context.params.credential_id!;
  if (!(await removeCredential(context.services.prisma, store, await by(context), id))) throw credentialNotFound(id);
  return empty(204);
}
