/**
 * Jamf Pro's SCEPChallenge webhook: Jamf POSTs (HTTP Basic, a local account) a JSON event when a device needs a
 * SCEP payload, and uses the answer body — a one-time challenge as text/plain — in the profile it sends; the
 * device redeems it in a normal PKCSReq on /jamf/<profile>/mscep.
 */
import type { LocalAccountsFacade, RouteScope } from '@certwright/sdk';
import type { ScepService } from '@certwright/sdk/scep-server';

export function registerJamfWebhook(scope: RouteScope, deps: { service: ScepService; localAccounts: LocalAccountsFacade }): void {
  scope.route({
    method: 'POST',
    url: '/jamf/:profile/webhook',
    schema: { tags: ['MDM'], summary: "Jamf Pro's SCEPChallenge webhook: a one-time challenge as text/plain (HTTP Basic, a local account)" },
    handler: async (req: { params: { profile: string }; headers: Record<string, string | string[] | undefined>; body?: unknown; ip?: string }, reply: { code(n: number): typeof reply; header(k: string, v: string): typeof reply; send(b: string): unknown }) => {
      const text = (status: number, code: string, message: string) => reply.code(status).header('content-type', 'text/plain; charset=utf-8').send(`${code}: ${message}\n`);
      let profile;
      try {
        profile = await deps.service.profile(req.params.profile);
      } catch {
        return text(404, 'MDM-001', 'No MDM service for this profile');
      }
      const basic = basicOf(req.headers.authorization);
      const account = basic ? await deps.localAccounts.verify('default', basic.user, basic.password, { remoteAddress: req.ip }) : null;
      if (!account) {
        reply.header('www-authenticate', 'Basic realm="Jamf webhook", charset="UTF-8"');
        return text(401, 'MDM-002', 'HTTP Basic authentication with a local account is required');
      }
      const allowed = profile.settings.adminAccounts;
      if (allowed && !allowed.includes(account.identifier)) return text(403, 'MDM-003', `Local account ${account.identifier} may not obtain Jamf challenges on this profile`);
      const event = (req.body ?? {}) as { webhook?: { webhookEvent?: unknown } };
      if (event.webhook?.webhookEvent !== 'SCEPChallenge') return text(400, 'MDM-004', 'The body is not a Jamf SCEPChallenge webhook event');
      const issued = await deps.service.issueChallenge(profile.profile.name, account.identifier);
      if ('refused' in issued) return text(403, 'MDM-005', `${issued.code}: ${issued.message}`);
      return reply.code(200).header('content-type', 'text/plain; charset=utf-8').header('cache-control', 'no-store').send(issued.challenge);
    },
  });
}

function basicOf(header: string | string[] | undefined): { user: string; password: string } | null {
  if (typeof header !== 'string' || !/^basic /i.test(header)) return null;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
