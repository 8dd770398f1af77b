/**
 * Certificate profiles in the vendor's (Horizon's) shape, beside Certwright's own (client-compat: the MCP
 * server's profile tools and the v2 Go SDK's WebRAProfileResponse need authorizationLevels, requestsPolicy,
 * selfPermissions, cryptoPolicy and certificateTemplate). Answers carry both shapes, derived from the stored
 * profile; bodies may use either shape for each part (the mappings: levels.ts, crypto.ts, template.ts,
 * fixed.ts). Nothing of the Horizon shape is stored as such: it is mapped onto the Certwright profile.
 *
 * Both shapes of one part in a body: they must say the same — except that a client which read a profile and
 * edits one shape sends the other back as it read it (the MCP update tool merges its changes into the GET
 * answer and PUTs it all; a Certwright client copies a profile's answer, edits it, POSTs it). So a shape that
 * repeats a stored profile (on a PUT, the one replaced; on a POST, any of the tenant's) gives way to the
 * other: first a Horizon part exactly as Certwright answers it, then a Certwright part equal to the stored
 * one. Otherwise the two disagreeing is a PRF-002 naming both fields.
 */
import { isDeepStrictEqual } from 'node:util';
import type { StoredProfile } from '../model.js';
import { viewOf } from '../model.js';
import type { CertificateProfile } from '../types.js';
import { invalid, type Json } from './common.js';
import { applyCryptoPolicy, cryptoPolicyOf } from './crypto.js';
import { checkRequestsPolicy, checkSelfPermissions, requestsPolicyOf, selfPermissionsOf } from './fixed.js';
import { applyLevels, levelsOf } from './levels.js';
import { applyLabels, applySans, applySingle, applySubject, checkTemplateExtras, labelsOf, sansOf, singleOf, subjectOf } from './template.js';

/** The top-level keys of the Horizon shape that Certwright's own shape does not have. */
export const HORIZON_KEYS = ['authorizationLevels', 'certificateTemplate', 'cryptoPolicy', 'requestsPolicy', 'selfPermissions', 'passwordPolicy'] as const;

/** The Horizon keys of a profile's answer. */
export function horizonKeysOf(p: CertificateProfile): Json {
  return {
    authorizationLevels: levelsOf(p.authorizations),
    certificateTemplate: {
      subject: subjectOf(p.subject),
      sans: sansOf(p.sans),
      labels: labelsOf(p.labels),
      ownerPolicy: singleOf(p.owner, false),
      teamPolicy: singleOf(p.team, true),
      contactEmailPolicy: singleOf(p.contactEmail, true),
    },
    cryptoPolicy: cryptoPolicyOf(p.keyPolicy),
    requestsPolicy: requestsPolicyOf(),
    selfPermissions: selfPermissionsOf(p.authorizations),
    // Horizon's top-level passwordPolicy is the one of the challenge (WebRAProfileResponse.PasswordPolicy).
    ...(p.challenge.passwordPolicy !== undefined ? { passwordPolicy: p.challenge.passwordPolicy } : {}),
  };
}

/** A profile as /api/v1/certificate/profiles/ answers it: Certwright's view and the Horizon keys. */
export const profileAnswer = (s: StoredProfile): Json => ({ ...viewOf(s), ...horizonKeysOf(s.profile) });

/** Horizon's authorizationMode `authorized` (permissions decide) is Certwright's `standard`. */
const MODES: Record<string, string> = { authorized: 'standard' };

/** The body without its Horizon keys, the Horizon authorizationMode named as Certwright names it. */
export function certwrightPart(body: Json): Json {
  const out: Json = { ...body };
  for (const key of HORIZON_KEYS) delete out[key];
  if (typeof out.authorizationMode === 'string' && MODES[out.authorizationMode]) out.authorizationMode = MODES[out.authorizationMode];
  return out;
}

export const hasHorizonKeys = (body: Json): boolean => HORIZON_KEYS.some((key) => body[key] !== undefined && body[key] !== null);

/** One part: where its Horizon value is in the body, the Certwright field it maps to, how it maps. */
interface Part {
  path: readonly [string] | readonly [string, string];
  field: keyof CertificateProfile;
  /** The Certwright field with the Horizon value (schema-checked: validate.ts) mapped onto `p`'s; PRF-002 when refused. */
  apply(sent: unknown, p: CertificateProfile): unknown;
}

const PARTS: readonly Part[] = [
  { path: ['cryptoPolicy'], field: 'keyPolicy', apply: (sent, p) => applyCryptoPolicy(sent as Json, p.keyPolicy) },
  { path: ['authorizationLevels'], field: 'authorizations', apply: (sent, p) => applyLevels(sent as Json, p.authorizations) },
  { path: ['certificateTemplate', 'subject'], field: 'subject', apply: (sent, p) => applySubject(sent as Json[], p.subject) },
  { path: ['certificateTemplate', 'sans'], field: 'sans', apply: (sent, p) => applySans(sent as Json[], p.sans) },
  { path: ['certificateTemplate', 'labels'], field: 'labels', apply: (sent, p) => applyLabels(sent as Json[], p.labels) },
  { path: ['certificateTemplate', 'ownerPolicy'], field: 'owner', apply: (sent, p) => applySingle('certificateTemplate.ownerPolicy', sent as Json, p.owner, false) },
  { path: ['certificateTemplate', 'teamPolicy'], field: 'team', apply: (sent, p) => applySingle('certificateTemplate.teamPolicy', sent as Json, p.team, true) },
  { path: ['certificateTemplate', 'contactEmailPolicy'], field: 'contactEmail', apply: (sent, p) => applySingle('certificateTemplate.contactEmailPolicy', sent as Json, p.contactEmail, true) },
  { path: ['passwordPolicy'], field: 'challenge', apply: (sent, p) => ({ ...p.challenge, passwordPolicy: sent as string }) },
];

const valueAt = (body: Json, path: Part['path']): unknown => {
  const first = body[path[0]];
  if (path.length === 1) return first;
  return first !== null && typeof first === 'object' ? (first as Json)[path[1]] : undefined;
};

/** Equal as JSON (undefined members dropped, key order ignored). */
const same = (a: unknown, b: unknown): boolean => isDeepStrictEqual(JSON.parse(JSON.stringify(a ?? null)), JSON.parse(JSON.stringify(b ?? null)));

/**
 * The profile with the body's Horizon parts mapped onto it. `profile` is the body's Certwright part with its
 * defaults (normalizeProfile); `stored` the profiles the body may repeat: on a PUT the one it replaces, on a
 * POST the tenant's.
 */
export function mergeHorizon(body: Json, profile: CertificateProfile, stored: readonly CertificateProfile[]): CertificateProfile {
  checkRequestsPolicy(body.requestsPolicy as Json | null | undefined);
  if (body.certificateTemplate) checkTemplateExtras(body.certificateTemplate as Json);
  const out: CertificateProfile = { ...profile };
  for (const part of PARTS) {
    const sent = valueAt(body, part.path);
    if (sent === undefined || sent === null) continue;
    const mapped = part.apply(sent, out);
    const field = part.field;
    if (body[field] === undefined || same(mapped, out[field])) {
      (out as unknown as Json)[field] = mapped;
      continue;
    }
    // Both shapes, saying different things: the one that repeats a stored profile is the one not edited.
    if (stored.some((p) => same(sent, valueAt(horizonKeysOf(p), part.path)))) continue;
    if (stored.some((p) => same(out[field], p[field]))) {
      (out as unknown as Json)[field] = mapped;
      continue;
    }
    throw invalid(`${part.path.join('.')} and ${field} disagree: send one of them, or the same settings in both`);
  }
  checkSelfPermissions(body.selfPermissions as Json | null | undefined, out.authorizations);
  return out;
}
