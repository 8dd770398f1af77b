import { CAPABILITIES, PLUGIN_KINDS } from './kinds.js';

/**
 * JSON Schema (draft-07, as ajv validates it by default) of a plugin's manifest.json.
 * The kernel validates every manifest against exactly this object.
 */
export const manifestSchema = {
  $id: 'https://certwright.dev/schemas/plugin-manifest.json',
  title: 'Certwright plugin manifest',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'version', 'kind', 'sdk', 'entry'],
  properties: {
    $schema: { type: 'string' },
    id: {
      description: 'Unique, npm-style identifier (lower case, optional @scope/).',
      type: 'string',
      maxLength: 214,
      pattern: '^(?:@[a-z0-9-~][a-z0-9-._~]*/)?[a-z0-9-~][a-z0-9-._~]*$',
    },
    name: { type: 'string', minLength: 1, maxLength: 200 },
    version: {
      description: 'Semantic version of the plugin.',
      type: 'string',
      pattern: '^\\d+\\.\\d+\\.\\d+(?:-[0-9A-Za-z.-]+)?(?:\\+[0-9A-Za-z.-]+)?$',
    },
    kind: { type: 'string', enum: [...PLUGIN_KINDS] },
    sdk: { description: 'Semver range of the SDK API the plugin was built for.', type: 'string', minLength: 1 },
    entry: { description: 'Entry module, relative to the manifest.', type: 'string', minLength: 1, pattern: '^(?!/)(?!.*\\.\\.)' },
    description: { type: 'string' },
    capability: { description: 'Protocols only: the host capability their routes belong to.', type: 'string', enum: [...CAPABILITIES] },
    license: { description: 'Licence module that must be granted for the plugin to run.', type: 'string', minLength: 1 },
    configSchema: { description: "JSON Schema of one instance's configuration; secret fields carry \"x-secret\": true.", type: 'object' },
    targetSchema: { description: "Trigger channels only: JSON Schema of a trigger's target; secret fields carry \"x-secret\": true.", type: 'object' },
    multiInstance: { type: 'boolean' },
    egress: {
      description: 'Hosts the plugin may reach through the context HTTP client ("*.example.com" allowed).',
      type: 'array',
      items: { type: 'string', minLength: 1 },
      uniqueItems: true,
    },
    migrations: { description: 'Folder of migration modules, relative to the manifest.', type: 'string', minLength: 1, pattern: '^(?!/)(?!.*\\.\\.)' },
    jobs: { description: 'Agenda job names the plugin defines.', type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
    docs: {
      type: 'object',
      additionalProperties: false,
      properties: {
        summary: { type: 'string' },
        links: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['title', 'url'],
            properties: { title: { type: 'string' }, url: { type: 'string' } },
          },
        },
      },
    },
  },
  allOf: [
    { if: { properties: { kind: { const: 'protocol' } }, required: ['kind'] }, then: { required: ['capability'] } },
    {
      if: { properties: { kind: { not: { const: 'protocol' } } }, required: ['kind'] },
      then: { not: { required: ['capability'] } },
    },
  ],
} as const;
