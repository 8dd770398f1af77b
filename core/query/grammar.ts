import { readFileSync } from 'node:fs';
import peggy from 'peggy';
import type { Literal, Operator } from './types.js';

/**
 * The parser, generated from grammar.peggy once, when this module loads (no build step). The grammar
 * lives in its own .peggy file rather than a TS string: PEG escapes (`"\\"`, `[^"\\]`) stay readable
 * without a second layer of template-literal escaping, and peggy's tools read it as is.
 */
const SOURCE = readFileSync(new URL('./grammar.peggy', import.meta.url), 'utf8');
const parser = peggy.generate(SOURCE, { output: 'parser' });

export const GrammarSyntaxError = parser.SyntaxError;

/** A dotted field name as written; `quoted` segments are parametric keys (`label."my key"`). */
export interface RawField {
  segments: { text: string; quoted: boolean }[];
  offset: number;
}

/** What the grammar yields: fields and specials not yet checked against a language. */
export type RawNode =
  | { kind: 'and'; children: RawNode[] }
  | { kind: 'or'; children: RawNode[] }
  | { kind: 'not'; child: RawNode }
  | { kind: 'compare'; field: RawField; operator: Operator; values: Literal[]; offset: number; operatorOffset: number }
  | { kind: 'special'; subject: RawField; verb: 'is' | 'has'; negated: boolean; value: { text: string; offset: number }; offset: number };

/** Throws peggy's SyntaxError, or an Error with `queryDepthOffset` when nesting exceeds `maxDepth`. */
export function parseRaw(text: string, maxDepth: number): RawNode {
  return parser.parse(text, { maxDepth }) as RawNode;
}
