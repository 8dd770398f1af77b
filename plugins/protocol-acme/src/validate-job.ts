/**
 * The `acme-validate` job: one challenge of one authorization. A wrong answer fails the authorization at
 * once; an unreachable identifier is tried again (retries with backoff) until the retries or the
 * authorization's lifetime run out. No request thread ever waits on the remote side.
 */
import type { PluginContext } from '@certwright/sdk';
import { thumbprintOf } from './jws.js';
import { VALIDATE_JOB } from './constants.js';
import type { AcmeStore } from './store.js';
import { Validator, type ValidationSettings } from './validation.js';

export function defineValidationJob(ctx: PluginContext, store: AcmeStore, settings: ValidationSettings & { retries: number; retryDelayMs: number }): void {
  const validator = new Validator(settings);
  ctx.jobs.define<{ authorization: string; type: string }>(
    VALIDATE_JOB,
    async (job) => {
      const z = await store.authorizationById(job.data.authorization);
      if (!z || z.status !== 'pending') return;
      const challenge = z.challenges.find((c) => c.type === job.data.type);
      if (!challenge || challenge.status !== 'processing') return;
      const account = await store.account(z.tenant, z.profile, z.accountId);
      if (!account) return;
      const keyAuthorization = `${challenge.token}.${await thumbprintOf(account.jwk)}`;
      let result = await validator.validate(challenge.type, z.identifier, challenge.token, keyAuthorization);
      if (result.valid) {
        // CAA is checked at validation (RFC 8659 §3 allows its result to be reused for the authorization's life).
        const profile = await ctx.enrollment.profile('acme', z.profile, z.tenant);
        const s: Record<string, unknown> = profile?.settings ?? {};
        if (s.caa !== false) {
          const identities = Array.isArray(s.caaIdentities) ? (s.caaIdentities as string[]) : [];
          const refused = await validator.caa(z.identifier, z.wildcard, identities);
          if (refused) result = { valid: false, retryable: false, error: refused };
        }
      }
      const now = ctx.clock.now();
      const lastTry = job.failCount >= settings.retries || now >= z.expiresAt;
      if (!result.valid && result.retryable && !lastTry) {
        // Agenda runs it again after the backoff; the challenge stays processing meanwhile.
        throw new Error(result.error.detail);
      }
      const done = z.challenges.map((c) => (c.type !== challenge.type ? c : result.valid ? { ...c, status: 'valid' as const, validated: now } : { ...c, status: 'invalid' as const, error: result.error }));
      if (await store.moveAuthorization(z.id, 'pending', result.valid ? 'valid' : 'invalid', done)) await store.settleOrder(z.orderId);
      job.logger.info({ authorization: z.id, type: challenge.type, identifier: z.identifier.value, valid: result.valid }, 'ACME challenge validated');
    },
    { concurrency: 8, retry: { retries: settings.retries, delayMs: settings.retryDelayMs } },
  );
}
