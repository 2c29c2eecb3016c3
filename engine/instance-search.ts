// The instance list's search, browser-safe: what a search may ask (one zod schema, for tRPC and
// the search box) and how the box's text reads as one. Three kinds:
//   a whole id          01930f4e-2b7c-7d1a-8e3f-1b2c3d4e5f60
//   a short id's start  1b2c3d   (4 to 12 hex digits of the id's last group, see short-id.ts)
//   a context field     data.order = "A-102"   (a path under context.data, a string, number or boolean)
import { z } from "zod";
import { UUID_PATTERN } from "./model.ts";
import { SHORT_ID_LENGTH, SHORT_ID_MIN_PREFIX } from "./short-id.ts";

export const CONTEXT_PATH_MAX_KEYS = 8;
export const CONTEXT_KEY_MAX_LENGTH = 64;
export const CONTEXT_VALUE_MAX_LENGTH = 1024;

/** One key of a context path: letters, digits, `_` and `-`. */
const CONTEXT_KEY = `[\\p{L}\\p{N}_-]{1,${CONTEXT_KEY_MAX_LENGTH}}`;
const CONTEXT_PATH_PATTERN = new RegExp(`^data(\\.${CONTEXT_KEY}){1,${CONTEXT_PATH_MAX_KEYS}}$`, "u");
const SHORT_ID_PREFIX_PATTERN = new RegExp(`^[0-9a-f]{${SHORT_ID_MIN_PREFIX},${SHORT_ID_LENGTH}}$`, "i");

const PATH_RULE =
  `a path under context.data: data.<key>, up to ${CONTEXT_PATH_MAX_KEYS} keys of letters, digits, _ or - (at most ${CONTEXT_KEY_MAX_LENGTH} each), joined by dots`;

export const InstanceSearchSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("id"), id: z.string().regex(UUID_PATTERN, "search.id must be a whole instance id (a UUID)") }),
  z.strictObject({
    kind: z.literal("shortId"),
    prefix: z.string().regex(SHORT_ID_PREFIX_PATTERN, `search.prefix must be ${SHORT_ID_MIN_PREFIX} to ${SHORT_ID_LENGTH} hex digits of a short id`),
  }),
  z.strictObject({
    kind: z.literal("context"),
    path: z.string().max(5 + CONTEXT_PATH_MAX_KEYS * (CONTEXT_KEY_MAX_LENGTH + 1), `search.path must be ${PATH_RULE}`)
      .regex(CONTEXT_PATH_PATTERN, `search.path must be ${PATH_RULE}`),
    value: z.union([z.string().max(CONTEXT_VALUE_MAX_LENGTH), z.number().finite(), z.boolean()], {
      error: `search.value must be a string (at most ${CONTEXT_VALUE_MAX_LENGTH} characters), a number or a boolean`,
    }),
  }),
]);
export type InstanceSearch = z.output<typeof InstanceSearchSchema>;

/** The keys under context.data that a context search's path names (`data.a.b` -> [a, b]). */
export const contextPathKeys = (path: string) => path.split(".").slice(1);

export const SEARCH_HINT = `a whole id, the start of a short id (${SHORT_ID_MIN_PREFIX} characters or more), or a context field such as data.order = "A-102"`;

/**
 * The box's text as a search: null when it is empty, else the search or why it is not one.
 * A value in JSON syntax ("A-102", 12, true) is that value; any other text is a string, so
 * `data.order = A-102` works unquoted and `data.order = "12"` finds the string.
 */
export function parseInstanceSearch(text: string): { search: InstanceSearch } | { error: string } | null {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  const equals = trimmed.indexOf("=");
  const read = equals >= 0 ? contextCandidate(trimmed.slice(0, equals).trim(), trimmed.slice(equals + 1).trim()) : idCandidate(trimmed);
  if ("error" in read) return read;
  const { candidate } = read;
  const parsed = InstanceSearchSchema.safeParse(candidate);
  if (parsed.success) return { search: parsed.data };
  const field = parsed.error.issues[0]?.path[0];
  if (field === "path") return { error: `“${clip(String(candidate.path))}” is not ${PATH_RULE}.` };
  if (field === "value") return { error: `The value must be at most ${CONTEXT_VALUE_MAX_LENGTH} characters.` };
  return { error: `Search by ${SEARCH_HINT}.` };
}

const clip = (text: string) => (text.length > 80 ? `${text.slice(0, 80)}…` : text);

/** What the text asks for, before the schema checks it. */
type Read = { candidate: Record<string, unknown> } | { error: string };

function idCandidate(text: string): Read {
  const lower = text.toLowerCase();
  if (UUID_PATTERN.test(lower)) return { candidate: { kind: "id", id: lower } };
  // 32 hex digits without dashes, as some tools print UUIDs.
  if (/^[0-9a-f]{32}$/.test(lower)) {
    const id = `${lower.slice(0, 8)}-${lower.slice(8, 12)}-${lower.slice(12, 16)}-${lower.slice(16, 20)}-${lower.slice(20)}`;
    return { candidate: { kind: "id", id } };
  }
  if (SHORT_ID_PREFIX_PATTERN.test(lower)) return { candidate: { kind: "shortId", prefix: lower } };
  if (/^[0-9a-f]{1,3}$/.test(lower)) return { error: `Type at least ${SHORT_ID_MIN_PREFIX} characters of a short id.` };
  return { error: `Search by ${SEARCH_HINT}.` };
}

function contextCandidate(path: string, valueText: string): Read {
  if (valueText === "") return { error: `Give ${clip(path) || "the field"} a value to match, such as ${clip(path) || "data.order"} = "A-102".` };
  return { candidate: { kind: "context", path, value: contextValue(valueText) } };
}

function contextValue(text: string): unknown {
  if (/^(true|false|-?\d+(\.\d+)?([eE][+-]?\d+)?)$/.test(text) || text.startsWith('"')) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
    } catch {
      // Not JSON after all ("abc without its closing quote): the text itself.
    }
  }
  return text;
}
