/**
 * How a certificate gets renewed today, the one rule the simulator (and later the lifecycle work, when
 * automation policies cover certificates) reads:
 *
 * - `ari`: its module is ACME, whose clients can ask the server when to renew (ACME Renewal Information);
 * - `protocol`: its module is another enrollment protocol whose clients renew on their own (EST, SCEP,
 *   the MDM ones, Windows enrollment);
 * - `auto-renew`: none of those, but the certificate is flagged `autoRenew` (the server renews it);
 * - `manual`: anything else (webra, discovered, imported, no module): someone renews it by hand.
 *
 * "Covered by automation" is every path but `manual`. A certificate an automation policy covers (its profile's,
 * matching its query: core/automation idsCoveredByPolicies) is renewed by the lifecycle task: `coveredByPolicy`.
 */
export type AutomationPath = 'ari' | 'protocol' | 'auto-renew' | 'manual';

export const AUTOMATION_PATHS: readonly AutomationPath[] = ['ari', 'protocol', 'auto-renew', 'manual'];

/** Modules whose clients drive their own renewals (module names as the inventory stores them, lower-case). */
export const PROTOCOL_MODULES: ReadonlySet<string> = new Set(['acme', 'est', 'scep', 'mdm', 'intune', 'jamf', 'wcce']);
const ARI_MODULES: ReadonlySet<string> = new Set(['acme']);

export interface CoverageFacts {
  module?: string | null;
  autoRenew?: boolean;
  /** An automation policy covers the certificate (the lifecycle task renews it). */
  coveredByPolicy?: boolean;
}

export function automationPath(c: CoverageFacts): AutomationPath {
  const module = c.module?.toLowerCase() ?? '';
  if (ARI_MODULES.has(module)) return 'ari';
  if (PROTOCOL_MODULES.has(module)) return 'protocol';
  if (c.autoRenew === true || c.coveredByPolicy === true) return 'auto-renew';
  return 'manual';
}

export const coveredByAutomation = (c: CoverageFacts): boolean => automationPath(c) !== 'manual';
