/**
 * Horizon profile settings that describe behaviour Certwright has, but does not let a profile change: they
 * are answered with what Certwright does and accepted when sent with that value (or left out, or null).
 *
 * - requestsPolicy (how long a pending request of each workflow lives): Certwright's pending requests do not
 *   expire, so every lifetime is absent.
 * - selfPermissions (a certificate's owner or holder may renew / revoke / update / recover it without a
 *   grant): Certwright grants no self-service right to owners; the selfPop* flags say whether the profile's
 *   lists grant the workflow to `holder:pop` (proof of possession), and are changed there.
 */
import { HOLDER_POP } from '../rights.js';
import type { CertificateProfile, Workflow } from '../types.js';
import { only, type Json } from './common.js';

const REQUEST_WORKFLOWS = ['enroll', 'revoke', 'recover', 'update', 'migrate', 'renew'] as const;
const SELF = ['selfRecover', 'selfUpdate', 'selfRevoke', 'selfRenew', 'selfPopRenew', 'selfPopRevoke', 'selfPopUpdate'] as const;

export const requestsPolicyOf = (): Json => ({});

/** selfPop<Workflow>: the profile's lists grant that workflow to `holder:pop` (a holder proving possession). */
const POP_FLAGS: Record<string, Workflow> = { selfPopRenew: 'renew', selfPopRevoke: 'revoke', selfPopUpdate: 'update' };
const popGranted = (authorizations: CertificateProfile['authorizations'], workflow: Workflow): boolean =>
  [...(authorizations.workflows[workflow]?.direct ?? []), ...(authorizations.workflows[workflow]?.request ?? [])].includes(HOLDER_POP);

export const selfPermissionsOf = (authorizations: CertificateProfile['authorizations']): Json =>
  Object.fromEntries(SELF.map((flag) => [flag, POP_FLAGS[flag] ? popGranted(authorizations, POP_FLAGS[flag]) : false]));

export function checkRequestsPolicy(sent: Json | null | undefined): void {
  for (const w of REQUEST_WORKFLOWS) only(`requestsPolicy.${w}`, sent?.[w], undefined, "Certwright's pending requests do not expire (leave it out or null)");
}

/** The flags must say what the profile grants: selfPop* follow `holder:pop` in its lists, the others are false. */
export function checkSelfPermissions(sent: Json | null | undefined, authorizations: CertificateProfile['authorizations']): void {
  for (const flag of SELF) {
    const workflow = POP_FLAGS[flag];
    if (workflow) {
      only(`selfPermissions.${flag}`, sent?.[flag], popGranted(authorizations, workflow), `grant or withdraw "${HOLDER_POP}" in authorizations.workflows.${workflow} instead`);
      continue;
    }
    only(`selfPermissions.${flag}`, sent?.[flag], false, 'Certwright grants no self-service right on a certificate: grant the workflow with authorizationLevels (or authorizations)');
  }
}

export { REQUEST_WORKFLOWS, SELF };
