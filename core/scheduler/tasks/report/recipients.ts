import type { Knex } from 'knex';
import { listMembers } from '../../../security/groups/memberships.js';
import { ADDRESS } from './check.js';
import type { ReportRecipient } from './parameters.js';

/**
 * The addresses of a recipient list at run time (Horizon's recipient types): a static address; a team's
 * contact; the email of its managers or of all its members (principal information first, else the local
 * account, as the member list answers). Teams change after the task is saved: a team gone or without
 * addresses gives none, and the run says so when no address is left at all.
 */
export async function addressesOf(knex: Knex, tenant: string, recipients: readonly ReportRecipient[] | null | undefined): Promise<string[]> {
  const out = new Set<string>();
  for (const r of recipients ?? []) {
    if (r.type === 'static') {
      if (r.email) out.add(r.email);
    } else if (r.type === 'team_contact') {
      const team = (await knex('security_teams').where({ tenant, name: r.team ?? '' }).first('contact')) as { contact: string | null } | undefined;
      if (team?.contact) out.add(team.contact);
    } else {
      const members = await listMembers(knex, tenant, 'team', r.team ?? '');
      for (const m of members) if (m.email && (r.type === 'team_members' || m.manager)) out.add(m.email);
    }
  }
  // An address stored long ago (a principal's email) is checked again: a bad one would fail the whole message.
  return [...out].filter((a) => ADDRESS.test(a));
}
