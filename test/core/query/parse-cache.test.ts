import t from 'tap';
import { CERTIFICATE_LANGUAGE } from '../../../core/inventory/language.js';
import { PARSE_CACHE_ENTRY_CHARS, PARSE_CACHE_MAX_CHARS, PARSE_CACHE_MAX_TEXT, PARSE_CACHE_SIZE } from '../../../core/query/limits.js';
import { parseCacheUsage, parseQuery } from '../../../core/query/parse.js';
import type { QueryLanguage } from '../../../core/query/types.js';

/** Caches are per language object: each test gets a language of its own, hence an empty cache. */
const freshLanguage = (): QueryLanguage => ({ ...CERTIFICATE_LANGUAGE });

/** A distinct `serial in [...]` query of about `length` characters. */
function longQuery(i: number, length: number): string {
  let text = `serial in ["${i}"`;
  for (let j = 0; text.length < length - 20; j++) text += `,"${i}-${j}"`;
  return `${text}]`;
}

t.test('the parse cache keeps at most PARSE_CACHE_SIZE entries (issue 24: bounded memory)', async (t) => {
  const L = freshLanguage();
  for (let i = 0; i < PARSE_CACHE_SIZE + 300; i++) parseQuery(`dn equals "host-${i}"`, L);
  t.equal(parseCacheUsage(L).entries, PARSE_CACHE_SIZE);
  // Least recently used out first: the newest are there (a hit returns the very tree), the oldest gone.
  const newest = `dn equals "host-${PARSE_CACHE_SIZE + 299}"`;
  t.equal(parseQuery(newest, L), parseQuery(newest, L), 'a hit returns the cached tree');
  t.equal(parseCacheUsage(L).entries, PARSE_CACHE_SIZE);
});

t.test('the parse cache holds at most PARSE_CACHE_MAX_CHARS characters of text, whatever the count', async (t) => {
  const L = freshLanguage();
  const length = PARSE_CACHE_MAX_TEXT - 500;
  for (let i = 0; i < 200; i++) parseQuery(longQuery(i, length), L);
  const usage = parseCacheUsage(L);
  t.ok(usage.chars <= PARSE_CACHE_MAX_CHARS, `${usage.chars} characters ≤ ${PARSE_CACHE_MAX_CHARS}`);
  t.equal(usage.entries, Math.floor(PARSE_CACHE_MAX_CHARS / (length + PARSE_CACHE_ENTRY_CHARS)), 'as many long texts as the budget holds');
  t.ok(usage.entries < PARSE_CACHE_SIZE);

  // A recently used long query survives newer ones; short queries still fill the room they leave.
  const kept = longQuery(199, length);
  const tree = parseQuery(kept, L);
  for (let i = 0; i < 20; i++) parseQuery(`dn equals "short-${i}"`, L);
  t.equal(parseQuery(kept, L), tree, 'the recently used long query is still cached');
  t.ok(parseCacheUsage(L).chars <= PARSE_CACHE_MAX_CHARS);
});

t.test('texts longer than PARSE_CACHE_MAX_TEXT are parsed but not cached', async (t) => {
  const L = freshLanguage();
  const text = longQuery(1, PARSE_CACHE_MAX_TEXT + 100);
  t.ok(text.length > PARSE_CACHE_MAX_TEXT);
  t.not(parseQuery(text, L), parseQuery(text, L), 'parsed afresh each time');
  t.same(parseCacheUsage(L), { entries: 0, chars: 0 });
});
