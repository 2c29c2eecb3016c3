// Short ids: how the web app names an instance (or any other UUID) where the whole id would not
// fit. Browser-safe. A UUIDv7 starts with its millisecond timestamp, so ids minted together (a
// batch) share their first characters; the last group is 48 random bits, so among a thousand ids
// the chance that two share it is about 2 in a billion. The instance search finds an instance by
// a prefix of it, through an index on the same expression (right(id::text, 12)).

export const SHORT_ID_LENGTH = 12;

/** The fewest characters of a short id a search takes: 16 bits, about one row in 65,000. */
export const SHORT_ID_MIN_PREFIX = 4;

/** The id's last group, lower case. */
export const shortId = (id: string) => id.slice(-SHORT_ID_LENGTH).toLowerCase();
