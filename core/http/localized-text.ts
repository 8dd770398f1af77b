/**
 * Localised text as the API carries it (displayName, description of labels, roles, teams): a list of
 * {lang, value}. A plain string is taken as English, as Horizon's MCP server sends one.
 */
export interface LocalizedText {
  lang: string;
  value: string;
}

export const localizedInput = {
  type: ['array', 'string', 'null'],
  maxItems: 64,
  maxLength: 4096,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['lang', 'value'],
    properties: { lang: { type: 'string', minLength: 1, maxLength: 16 }, value: { type: 'string', maxLength: 4096 } },
  },
} as const;

export const localizedOutput = {
  type: 'array',
  items: { type: 'object', required: ['lang', 'value'], properties: { lang: { type: 'string' }, value: { type: 'string' } } },
} as const;

/** As stored: a copy of the list (only lang and value), a non-empty string as English, nothing as []. */
export const localizedOf = (given: LocalizedText[] | string | null | undefined): LocalizedText[] =>
  typeof given === 'string' ? (given === '' ? [] : [{ lang: 'en', value: given }]) : (given ?? []).map((t) => ({ lang: t.lang, value: t.value }));
