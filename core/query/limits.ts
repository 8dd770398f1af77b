/**
 * Bounds on what one query may cost (hardening, issue 6 item 3). A query over them is HQL-001, never
 * a stack overflow, a SQLite "too many SQL variables" or an "expression tree too large".
 */
/** Characters of query text (the search body schema refuses the same length). */
export const MAX_QUERY_LENGTH = 1_000_000;
/** Nested parentheses plus `not`s around any point of the query. */
export const MAX_DEPTH = 64;
/**
 * Bound parameters one query may add (each comparison counts at least one). SQLite stops at 32,766
 * variables per statement; the rest of a search statement (tenant, visibility, paging) fits under it.
 */
export const MAX_PARAMETERS = 30_000;
/** Characters of one regular expression (`matches`, `within`). */
export const MAX_REGEX_LENGTH = 512;
/** Parsed queries kept per language: clients send the same text page after page. */
export const PARSE_CACHE_SIZE = 500;
/** Longer texts are not cached (500 of them at 1 MB would pin 500 MB). */
export const PARSE_CACHE_MAX_TEXT = 10_000;
/**
 * Characters of query text a language's parse cache holds at most, all entries together (each counts its length
 * plus PARSE_CACHE_ENTRY_CHARS). The count alone did not bound memory: a checked tree weighs about 8 bytes per
 * character of its text (an `in` list of 10,000 characters: 84 KB, plus the text as key), so 500 distinct texts
 * just under PARSE_CACHE_MAX_TEXT pinned about 47 MB per language (issue 24: a soak of distinct long queries).
 * 500,000 characters is about 5 MB per language, and still every one of 500 queries of up to 900 characters.
 */
export const PARSE_CACHE_MAX_CHARS = 500_000;
/** What an entry counts beyond its text: a one-character query still costs a tree and a map slot. */
export const PARSE_CACHE_ENTRY_CHARS = 100;
