/**
 * The Intune flavour's PKCSReq: the challenge is Intune's, so Intune validates the request (validateRequest)
 * before it goes to the workflow, and hears of the outcome afterwards (successNotification with the issued
 * certificate, failureNotification with the reason). A notification that fails is logged; the device's answer
 * stands.
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { CredentialsFacade, EnrollmentFacade } from '@certwright/sdk';
import { ScepRefusal, type ScepHooks } from '@certwright/sdk/scep-server';
import { IntuneError, type IntuneClient } from './intune.js';

interface IntuneSettings {
  tenant: string;
  credential: string;
}

function intuneSettingsOf(settings: Record<string, unknown>): IntuneSettings {
  const s = (settings.intune ?? {}) as Record<string, unknown>;
  if (typeof s.tenant !== 'string' || !s.tenant || typeof s.credential !== 'string' || !s.credential) throw new ScepRefusal('badRequest', 'The profile has no Intune tenant and credential (protocols.mdm.intune)');
  return { tenant: s.tenant, credential: s.credential };
}

export function intuneHooks(deps: { intune: IntuneClient; credentials: CredentialsFacade; enrollment: EnrollmentFacade }): ScepHooks {
  const app = (s: IntuneSettings) => deps.credentials.resolve(s.credential, { kind: 'password', target: 'mdm' });
  return {
    async pkcsReq(input) {
      const settings = intuneSettingsOf(input.profile.settings);
      if (!input.challenge) throw new ScepRefusal('badRequest', 'The request carries no Intune challenge');
      let verdict;
      try {
        verdict = await deps.intune.validate(settings.tenant, await app(settings), { transactionId: input.message.transactionId, csrDer: input.csrDer });
      } catch (err) {
        throw new ScepRefusal('badRequest', `Intune could not validate the request: ${err instanceof IntuneError ? err.message : 'unreachable'}`);
      }
      if (!verdict.valid) throw new ScepRefusal('badRequest', `Intune refused the challenge: ${verdict.code}`);
      return deps.enrollment.enroll({ protocol: 'mdm', profile: input.profile.name, csrPem: input.csrPem, requester: `intune:${settings.tenant}`.slice(0, 191) });
    },
    async answered(input, answer) {
      if (answer.status === 'PENDING') return;
      const settings = intuneSettingsOf(input.profile.settings);
      const credential = await app(settings);
      if (answer.status === 'SUCCESS' && answer.certificateDer) {
        const x509 = new X509Certificate(Buffer.from(answer.certificateDer));
        await deps.intune.success(settings.tenant, credential, {
          transactionId: input.message.transactionId,
          csrDer: input.csrDer,
          thumbprint: createHash('sha1').update(x509.raw).digest('hex').toUpperCase(),
          serial: x509.serialNumber,
          notAfter: new Date(x509.validTo),
          issuer: x509.issuer.split('\n').reverse().join(', '),
          caConfiguration: `Certwright/${input.profile.name}`,
        });
      } else {
        await deps.intune.failure(settings.tenant, credential, { transactionId: input.message.transactionId, csrDer: input.csrDer, description: answer.reason ?? 'The request failed' });
      }
    },
  };
}
