/**
 * Horizon profile settings that describe behaviour Certwright has, but does not let a profile change: they
 * are answered with what Certwright does and accepted when sent with that value (or left out, or null).
 *
 * - requestsPolicy (how long a pending request of each workflow lives): Certwright's pending requests do not
 *   expire, so every lifetime is absent.
 * - selfPermissions (a certificate's owner or holder may renew / revoke / update / recover it without a
 *   grant): Certwright grants no self-service right; the workflows are granted by authorizations and
 *   permissions, so every flag is false.
 */
import { only, type Json } from './common.js';

const REQUEST_WORKFLOWS = ['enroll', 'revoke', 'recover', 'update', 'migrate', 'renew'] as const;
const SELF = ['selfRecover', 'selfUpdate', 'selfRevoke', 'selfRenew', 'selfPopRenew', 'selfPopRevoke', 'selfPopUpdate'] as const;

export const requestsPolicyOf = (): Json => ({});
export const selfPermissionsOf = (): Json => Object.fromEntries(SELF.map((flag) => [flag, false]));

export function checkRequestsPolicy(sent: Json | null | undefined): void {
  for (const w of REQUEST_WORKFLOWS) only(`requestsPolicy.${w}`, sent?.[w], undefined, "Certwright's pending requests do not expire (leave it out or null)");
}

export function checkSelfPermissions(sent: Json | null | undefined): void {
  for (const flag of SELF) {
    only(`selfPermissions.${flag}`, sent?.[flag], false, 'Certwright grants no self-service right on a certificate: grant the workflow with authorizationLevels (or authorizations)');
  }
}

export { REQUEST_WORKFLOWS, SELF };
