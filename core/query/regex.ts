import { MAX_REGEX_LENGTH } from './limits.js';

/**
 * Regular expressions of `matches` / `within`, checked against the subset that means the same in both
 * engines: JavaScript (the `regexp()` function registered on SQLite, `u` flag) and PCRE2 (MariaDB /
 * MySQL `REGEXP`). Outside it a pattern is refused (HQL-001) rather than answered differently per
 * database, or failing with a SQL error on one of them.
 *
 * Portable: literals, `.`, classes `[a-z]` / `[^…]`, `\d \w \s \D \W \S \b \B`, `\n \r \t \f`, `\xHH`,
 * escaped punctuation (`\.`, `\-`: normalised to a spelling both accept), anchors `^ $`, groups `(…)`,
 * `(?:…)`, lookaheads `(?=…)` `(?!…)`, alternation, quantifiers `* + ? {n} {n,} {n,m}` (n, m ≤ 1000)
 * and their lazy forms. Refused: backreferences, lookbehind, named groups, inline flags, POSIX
 * classes (`[[:alpha:]]`), `\p{…}`, `\u…`, `\v`, possessive quantifiers, a lone `{ } ]`.
 * Remaining corners: `\w \d \s \b` and case-insensitivity beyond ASCII (MariaDB's PCRE2 runs in UCP
 * mode: `\w` matches `é` there, not in JavaScript); `$` also matches before a final newline in PCRE;
 * `.` matches `\r` in PCRE, not in JavaScript.
 *
 * Backtracking: SQLite runs the regex in JavaScript, synchronously, with no step limit (MariaDB gives up
 * after its match limit). So a repeated group may not itself contain repetition or alternation (`(a+)+`,
 * `(a|ab)*`: exponential) and at most MAX_UNBOUNDED quantifiers are unbounded (`* + {n,}`).
 */
export const MAX_UNBOUNDED = 4;
const MAX_COUNT = 1000;

export class RegexError extends Error {
  constructor(
    message: string,
    /** Offset in the pattern. */
    readonly index: number,
  ) {
    super(message);
  }
}

/** A pattern that is only a literal between optional anchors: an index can answer it without a regex. */
export interface RegexLiteral {
  text: string;
  /** `^literal…`: anchored at the start (no `.*` after the `^`). */
  start: boolean;
  /** `…literal$`. */
  end: boolean;
}

export interface CheckedRegex {
  /** The pattern to send to either engine: same meaning, spelling both accept. */
  pattern: string;
  literal?: RegexLiteral;
}

const SYNTAX = new Set('^$\\.*+?()[]{}|/');
const CLASS_ESCAPES = new Set('dDwWsS');
const CONTROL_ESCAPES = new Set('nrtf');

interface Info {
  repeat: boolean;
  alternation: boolean;
}

/** Top-level items, for the literal analysis. */
type Token = { t: 'start' } | { t: 'end' } | { t: 'char'; c: string } | { t: 'any' } | { t: 'other' };

export function checkRegex(source: string): CheckedRegex {
  if (source.length > MAX_REGEX_LENGTH) throw new RegexError(`regular expressions are limited to ${MAX_REGEX_LENGTH} characters`, MAX_REGEX_LENGTH);
  const scanner = new Scanner(source);
  const tokens: Token[] = [];
  scanner.disjunction(tokens);
  if (scanner.i < source.length) throw new RegexError('unbalanced ")"', scanner.i);
  try {
    new RegExp(scanner.out, 'u');
  } catch (err) {
    throw new RegexError(`invalid regular expression: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}`, 0);
  }
  const literal = literalOf(tokens);
  return literal ? { pattern: scanner.out, literal } : { pattern: scanner.out };
}

class Scanner {
  i = 0;
  out = '';
  unbounded = 0;
  constructor(readonly src: string) {}

  private fail(message: string, at = this.i): never {
    throw new RegexError(message, at);
  }

  /** Alternatives up to `)` or the end. `tokens`: collect the top level (null inside groups). */
  disjunction(tokens: Token[] | null): Info {
    const info: Info = { repeat: false, alternation: false };
    while (this.i < this.src.length && this.src[this.i] !== ')') {
      if (this.src[this.i] === '|') {
        info.alternation = true;
        tokens?.push({ t: 'other' });
        this.out += '|';
        this.i++;
        continue;
      }
      const term = this.term(tokens);
      info.repeat ||= term.repeat;
      info.alternation ||= term.alternation;
    }
    return info;
  }

  private term(tokens: Token[] | null): Info {
    const at = this.i;
    const c = this.src[this.i]!;
    let info: Info = { repeat: false, alternation: false };
    let token: Token = { t: 'other' };
    let quantifiable = true;
    let group = false;
    switch (c) {
      case '(': {
        this.i++;
        let lookahead = false;
        if (this.src[this.i] === '?') {
          const kind = this.src[this.i + 1];
          if (kind !== ':' && kind !== '=' && kind !== '!') this.fail('only (…), (?:…), (?=…) and (?!…) groups are portable', at);
          lookahead = kind !== ':';
          this.out += `(?${kind}`;
          this.i += 2;
        } else {
          this.out += '(';
        }
        info = this.disjunction(null);
        if (this.src[this.i] !== ')') this.fail('missing ")"', at);
        this.out += ')';
        this.i++;
        quantifiable = !lookahead;
        group = true;
        break;
      }
      case '[':
        this.characterClass();
        break;
      case '.':
        this.out += '.';
        this.i++;
        token = { t: 'any' };
        break;
      case '^':
      case '$':
        this.out += c;
        this.i++;
        token = { t: c === '^' ? 'start' : 'end' };
        quantifiable = false;
        break;
      case '\\':
        ({ token, quantifiable } = this.escape());
        break;
      case '*':
      case '+':
      case '?':
        throw new RegexError(`nothing to repeat before "${c}"`, at);
      case '{':
      case '}':
      case ']':
        throw new RegexError(`a literal "${c}" must be escaped`, at);
      case '\u0000':
        throw new RegexError('NUL characters are not allowed', at);
      default: {
        const cp = String.fromCodePoint(this.src.codePointAt(this.i)!);
        this.out += cp;
        this.i += cp.length;
        token = { t: 'char', c: cp };
      }
    }
    const quantifier = this.quantifier();
    if (quantifier) {
      if (!quantifiable) this.fail('nothing to repeat', at);
      if (quantifier.max > 1 && group && (info.repeat || info.alternation)) {
        this.fail('a repeated group may not contain repetition or alternation (catastrophic backtracking)', at);
      }
      if (quantifier.max === Infinity && ++this.unbounded > MAX_UNBOUNDED) this.fail(`at most ${MAX_UNBOUNDED} unbounded repetitions (*, +, {n,})`, at);
      if (quantifier.max > 1) info = { ...info, repeat: true };
      // `.*` is "anything" for the literal analysis; any other repeated item is not a literal.
      token = token.t === 'any' && quantifier.min === 0 && quantifier.max === Infinity ? { t: 'any' } : { t: 'other' };
    } else if (token.t === 'any') {
      token = { t: 'other' };
    }
    tokens?.push(token);
    return info;
  }

  private quantifier(): { min: number; max: number } | undefined {
    const c = this.src[this.i];
    let q: { min: number; max: number } | undefined;
    if (c === '*') q = { min: 0, max: Infinity };
    else if (c === '+') q = { min: 1, max: Infinity };
    else if (c === '?') q = { min: 0, max: 1 };
    if (q) {
      this.out += c;
      this.i++;
    } else if (c === '{') {
      const m = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(this.src.slice(this.i, this.i + 12));
      if (!m) this.fail('a literal "{" must be escaped');
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (min > MAX_COUNT || (max !== Infinity && max > MAX_COUNT)) this.fail(`repetition counts stop at ${MAX_COUNT}`);
      if (max < min) this.fail('repetition range out of order');
      q = { min, max };
      this.out += m[0];
      this.i += m[0].length;
    } else {
      return undefined;
    }
    if (this.src[this.i] === '?') {
      this.out += '?';
      this.i++;
    }
    return q;
  }

  /** An escape outside a class. */
  private escape(): { token: Token; quantifiable: boolean } {
    const at = this.i;
    const c = this.src[this.i + 1];
    if (c === undefined) this.fail('"\\" at the end of the pattern', at);
    this.i += 2;
    if (CLASS_ESCAPES.has(c) || CONTROL_ESCAPES.has(c)) {
      this.out += `\\${c}`;
      return { token: { t: 'other' }, quantifiable: true };
    }
    if (c === 'b' || c === 'B') {
      this.out += `\\${c}`;
      return { token: { t: 'other' }, quantifiable: false };
    }
    if (c === 'x') return { token: { t: 'char', c: this.hexEscape(at) }, quantifiable: true };
    if (isPunctuation(c)) {
      this.out += SYNTAX.has(c) ? `\\${c}` : c;
      return { token: { t: 'char', c }, quantifiable: true };
    }
    throw new RegexError(`the escape "\\${c}" is not portable`, at);
  }

  private hexEscape(at: number): string {
    const hex = /^[0-9a-fA-F]{2}/.exec(this.src.slice(this.i, this.i + 2))?.[0];
    if (!hex) this.fail('"\\x" takes two hexadecimal digits', at);
    this.out += `\\x${hex}`;
    this.i += 2;
    return String.fromCharCode(parseInt(hex, 16));
  }

  private characterClass(): void {
    const at = this.i;
    this.out += '[';
    this.i++;
    if (this.src[this.i] === '^') {
      this.out += '^';
      this.i++;
    }
    if (this.src[this.i] === ']') this.fail('empty character classes are not portable', at);
    for (;;) {
      const c = this.src[this.i];
      if (c === undefined) this.fail('missing "]"', at);
      if (c === ']') break;
      if (c === '[') this.fail('a literal "[" in a class must be escaped (POSIX classes are not portable)');
      if (c === '\u0000') this.fail('NUL characters are not allowed');
      if (c === '\\') {
        const e = this.src[this.i + 1];
        if (e === undefined) this.fail('"\\" at the end of the pattern');
        if (CLASS_ESCAPES.has(e) || CONTROL_ESCAPES.has(e)) {
          this.out += `\\${e}`;
          this.i += 2;
        } else if (e === 'x') {
          this.i += 2;
          this.hexEscape(this.i - 2);
        } else if (isPunctuation(e)) {
          this.out += SYNTAX.has(e) || e === '-' ? `\\${e}` : e;
          this.i += 2;
        } else {
          this.fail(`the escape "\\${e}" is not portable in a class`);
        }
        continue;
      }
      const cp = String.fromCodePoint(this.src.codePointAt(this.i)!);
      this.out += cp;
      this.i += cp.length;
    }
    this.out += ']';
    this.i++;
  }
}

const isPunctuation = (c: string): boolean => /^[!-/:-@[-`{-~]$/.test(c);

/** `^lit`, `lit$`, `^lit$`, `.*lit$`, `^.*lit$`, `^lit.*`: the literal and its anchors. */
function literalOf(tokens: Token[]): RegexLiteral | undefined {
  let from = 0;
  let to = tokens.length;
  let start = false;
  let end = false;
  if (tokens[from]?.t === 'start') {
    from++;
    if (tokens[from]?.t === 'any') from++;
    else start = true;
  } else if (tokens[from]?.t === 'any') {
    from++;
  }
  if (tokens[to - 1]?.t === 'end' && to - 1 >= from) {
    to--;
    if (tokens[to - 1]?.t === 'any' && to - 1 >= from) to--;
    else end = true;
  } else if (tokens[to - 1]?.t === 'any' && to - 1 >= from) {
    to--;
  }
  if (to <= from) return undefined;
  let text = '';
  for (const token of tokens.slice(from, to)) {
    if (token.t !== 'char') return undefined;
    text += token.c;
  }
  return { text, start, end };
}
