/** Field schemas shared by the core's configuration types. */

/** Horizon's name rule for configuration objects (`[0-9a-zA-Z-_.]+`, MCP http-proxies.ts, storages.ts). */
export const objectName = { type: 'string', minLength: 1, maxLength: 191, pattern: '^[0-9a-zA-Z_.-]+$' } as const;

export const description = { type: 'string', maxLength: 4096 } as const;

/** A localized text: `[{lang, value}]`, at least one. */
export const localizedTexts = {
  type: 'array',
  minItems: 1,
  maxItems: 64,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['lang', 'value'],
    properties: { lang: { type: 'string', minLength: 2, maxLength: 16 }, value: { type: 'string', maxLength: 65536 } },
  },
} as const;

/** The name of another configuration object. */
export const reference = { type: 'string', minLength: 1, maxLength: 191 } as const;
