import type { FastifyRequest } from 'fastify';
import { lifecyclePermission } from '../security/permissions/catalogue.js';
import type { CertificateObject } from './types.js';

/** Workflows whose rights a certificate answer reports, as `x` (direct) and `requestX` (request). */
export const WORKFLOWS = ['revoke', 'update', 'recover', 'enroll', 'migrate'] as const;
export type CertificatePermissions = Record<string, boolean>;

export const certificatePermissionsSchema = {
  type: 'object',
  properties: Object.fromEntries(WORKFLOWS.flatMap((w) => [w, `request${w[0]!.toUpperCase()}${w.slice(1)}`]).map((k) => [k, { type: 'boolean' }])),
} as const;

/**
 * The caller's rights on a certificate's workflows (GET /certificates/{id} `permissions`, and search
 * results that ask for `permissions`); all false for a certificate without a module and profile.
 */
export function permissionsOf(request: FastifyRequest, certificate: Pick<CertificateObject, 'module' | 'profile'>): CertificatePermissions {
  const granted = request.principal!.permissions;
  const out: CertificatePermissions = {};
  for (const w of WORKFLOWS) {
    const can = (right: 'direct' | 'request'): boolean =>
      certificate.profile !== undefined && certificate.module !== undefined && granted.allows(lifecyclePermission(certificate.module, certificate.profile, w, right));
    out[w] = can('direct');
    out[`request${w[0]!.toUpperCase()}${w.slice(1)}`] = can('request');
  }
  return out;
}
