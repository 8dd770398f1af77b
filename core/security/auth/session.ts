import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';

export const SESSION_COOKIE = 'PLAY_SESSION';
export const CSRF_COOKIE = 'csrf-token';
export const CSRF_HEADER = 'csrf-token';

/** What a PLAY_SESSION token says: who logged in, through which provider, until when. */
export interface SessionClaims {
  identifier: string;
  tenant: string;
  identityProviderName: string;
  identityProviderType: string;
  jti: string;
  issuedAt: number;
  expiresAt: number;
}

const ISSUER = 'certwright';

/**
 * PLAY_SESSION cookies: HS256 JWTs (jose) signed with a key derived from the master key, so every node
 * sharing the master key accepts them and a node keeps no session state (DESIGN.md §4). The csrf-token
 * that goes with a session is an HMAC of its token id: a cookie planted by a sibling host cannot match.
 */
export class SessionTokens {
  constructor(
    private readonly key: Uint8Array,
    private readonly lifetimeMs: number,
    private readonly clock: () => number,
  ) {}

  async issue(who: Omit<SessionClaims, 'jti' | 'issuedAt' | 'expiresAt'>): Promise<{ token: string; claims: SessionClaims }> {
    const now = this.clock();
    const jti = randomBytes(16).toString('base64url');
    const expiresAt = now + this.lifetimeMs;
    // iat has one-second resolution; `iam` (ms) orders the session exactly against a credential change.
    const token = await new SignJWT({ tid: who.tenant, idp: who.identityProviderName, idt: who.identityProviderType, iam: now })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(who.identifier)
      .setJti(jti)
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor(expiresAt / 1000))
      .sign(this.key);
    return { token, claims: { ...who, jti, issuedAt: now, expiresAt } };
  }

  /** The claims of a valid, unexpired token; 'expired' for a genuine but expired one; null otherwise. */
  async verify(token: string): Promise<SessionClaims | 'expired' | null> {
    if (token.length > 4096) return null;
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        currentDate: new Date(this.clock()),
        requiredClaims: ['sub', 'jti', 'exp'],
      });
      const { sub, jti, exp, tid, idp, idt, iam } = payload;
      if (typeof tid !== 'string' || typeof idp !== 'string' || typeof idt !== 'string' || typeof iam !== 'number') return null;
      return { identifier: sub!, tenant: tid, identityProviderName: idp, identityProviderType: idt, jti: jti!, issuedAt: iam, expiresAt: exp! * 1000 };
    } catch (err) {
      return (err as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'expired' : null;
    }
  }

  csrfTokenFor(jti: string): string {
    return createHmac('sha256', this.key).update(`csrf:${jti}`).digest('base64url');
  }
}

/** Constant-time string equality (lengths may differ). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
