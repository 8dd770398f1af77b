/** Plugin kinds the kernel knows how to load (DESIGN.md §1). */
export const PLUGIN_KINDS = [
  'protocol',
  'pki-connector',
  'dcv-provider',
  'dcv-provisioner',
  'trigger-channel',
  'identity-provider',
  'third-party-connector',
  'storage',
] as const;
export type PluginKind = (typeof PLUGIN_KINDS)[number];

/** Host capabilities of the spec's "Endpoint groups"; a route answers only on a host allowed its capability. */
export const CAPABILITIES = [
  'configuration',
  'events',
  'discovery',
  'webra',
  'wcce',
  'acme',
  'est',
  'scep',
  'scim',
  'mdm',
  'dcv',
] as const;
export type Capability = (typeof CAPABILITIES)[number];
