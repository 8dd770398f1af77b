import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { ConfigRegistry } from '../../config-objects/registry.js';
import { credentialsFacade } from '../../config-objects/credentials-facade.js';
import { notFound, ScimError } from './errors.js';
import { profileOf, SCIM_PROFILE_TYPE, type ScimProfile } from './profile-type.js';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Equal strings, in a time that depends on neither (both hashed to 32 bytes first). */
export function sameToken(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

export const unauthorized = (): ScimError => new ScimError(401, undefined, "Authenticate with the SCIM profile's bearer token (Authorization: Bearer <token>)");

/**
 * The SCIM profile named in the path, once the request's bearer token is its token: an unknown or disabled
 * profile is 404; a missing or wrong token is 401. The token is the `secret` of the profile's raw credential,
 * read at every request (a PUT of the credential rotates it at once), compared in constant time. Why a
 * token could not be read (a credential of another kind, or not usable by scim) goes to the log only.
 */
export async function authenticateScim(request: FastifyRequest, registry: ConfigRegistry, profileName: string): Promise<ScimProfile> {
  const object = await registry.resolve(SCIM_PROFILE_TYPE, request.tenant, profileName);
  if (!object || object.enabled === false) throw notFound(`No SCIM profile "${profileName}"`);
  const profile = profileOf(object);
  const match = BEARER.exec(request.headers.authorization ?? '');
  if (!match) throw unauthorized();
  let token: string | undefined;
  try {
    token = (await credentialsFacade(registry).resolve(profile.token, { kind: 'raw', target: 'scim', tenant: request.tenant })).secret;
  } catch (err) {
    request.log.warn({ profile: profile.name, reason: (err as Error).message }, 'SCIM profile token unusable');
  }
  if (token === undefined || !sameToken(match[1]!, token)) throw unauthorized();
  return profile;
}
