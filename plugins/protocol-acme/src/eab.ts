/**
 * Verifies an externalAccountBinding (RFC 8555 §7.3.4): a flattened JWS, MAC'd with the EAB key (HS256,
 * HS384, HS512), whose protected header names the key (kid) and the newAccount URL and carries no nonce, and
 * whose payload is the account's public key.
 */
import { flattenedVerify, type JWK } from 'jose';
import type { PluginConfigObjects } from '@certwright/sdk';
import { parseJws, thumbprintOf } from './jws.js';
import { AcmeProblem } from './problems.js';
import { EAB_KEY, EAB_POLICY, type EabKey, type EabPolicy } from './eab-types.js';

const MAC_ALGORITHMS = ['HS256', 'HS384', 'HS512'];

export async function verifyEab(binding: unknown, accountJwk: JWK, newAccountUrl: string, profile: string, objects: PluginConfigObjects, now: number): Promise<{ kid: string; policy: EabPolicy }> {
  const jws = parseJws(binding);
  let header: { alg?: unknown; kid?: unknown; url?: unknown; nonce?: unknown };
  try {
    header = JSON.parse(Buffer.from(jws.protected, 'base64url').toString('utf8'));
  } catch {
    throw new AcmeProblem('malformed', 'The external account binding header is not JSON');
  }
  if (typeof header.alg !== 'string' || !MAC_ALGORITHMS.includes(header.alg)) throw new AcmeProblem('malformed', 'The external account binding is MAC\'d with HS256, HS384 or HS512');
  if (header.nonce !== undefined) throw new AcmeProblem('malformed', 'The external account binding carries no nonce');
  if (header.url !== newAccountUrl) throw new AcmeProblem('malformed', 'The external account binding url is not the newAccount URL');
  if (typeof header.kid !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(header.kid)) throw new AcmeProblem('unauthorized', 'The external account binding names no known key');
  const key = (await objects.get(EAB_KEY, header.kid)) as EabKey | null;
  if (!key || key.enabled === false || (key.expiresAt !== undefined && key.expiresAt <= now)) throw new AcmeProblem('unauthorized', 'The external account binding key is unknown, disabled or expired');
  try {
    await flattenedVerify(jws, Buffer.from(key.hmacKey.replace(/=+$/, ''), 'base64url'), { algorithms: [header.alg] });
  } catch {
    throw new AcmeProblem('unauthorized', 'The external account binding MAC does not verify');
  }
  let bound: JWK;
  try {
    bound = JSON.parse(Buffer.from(jws.payload, 'base64url').toString('utf8')) as JWK;
  } catch {
    throw new AcmeProblem('malformed', 'The external account binding payload is not a JWK');
  }
  if ((await thumbprintOf(bound).catch(() => '')) !== (await thumbprintOf(accountJwk))) throw new AcmeProblem('unauthorized', 'The external account binding binds another key');
  const policy = (await objects.get(EAB_POLICY, key.policy)) as EabPolicy | null;
  if (!policy) throw new AcmeProblem('unauthorized', 'The external account binding key has no policy');
  if (policy.profiles?.length && !policy.profiles.includes(profile)) throw new AcmeProblem('unauthorized', `The external account binding key does not allow profile ${profile}`);
  return { kid: header.kid, policy };
}
