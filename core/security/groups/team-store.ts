import type { Knex } from 'knex';
import { isUniqueViolation } from '../../db/unique.js';
import { ProblemError } from '../../errors/index.js';
import { GroupStore, type GroupInput, type GroupRow, type Stored } from './group-store.js';
import { lockingRead } from './input.js';
import * as memberships from './memberships.js';
import { managersOf, setManagers } from './team-managers.js';
import { onTeamMigrated, type TeamMigration } from './team-migration.js';
import { webhookColumns, webhookFromRow, type TeamWebhook } from './team-webhook.js';

export interface TeamInput extends GroupInput {
  contact: string | null;
  /** Synchronised from an external directory: RA team managers cannot change its members. */
  externallyManaged: boolean;
  webhook: TeamWebhook | null;
  /**
   * The members with the manager flag (team-managers.ts). Always set on what the store answers; on a write,
   * undefined leaves the flags as they are.
   */
  managers?: string[];
}

/** security_teams: groups of principals that own certificates and requests (no permission by itself). */
export class TeamStore extends GroupStore<TeamInput> {
  readonly kind = 'team' as const;
  readonly codes = { invalid: 'SEC-TEAM-002', notFound: 'SEC-TEAM-003', exists: 'SEC-TEAM-004' } as const;
  protected readonly table = 'security_teams';

  protected columns(input: TeamInput): Record<string, unknown> {
    return { contact: input.contact, externally_managed: input.externallyManaged, ...webhookColumns(input.webhook) };
  }

  protected fields(row: GroupRow): Pick<TeamInput, 'contact' | 'externallyManaged' | 'webhook'> {
    return { contact: (row.contact as string | null) ?? null, externallyManaged: Boolean(row.externally_managed), webhook: webhookFromRow(row) };
  }

  protected override async writeRelated(trx: Knex.Transaction, tenant: string, input: TeamInput): Promise<void> {
    if (input.managers !== undefined) await setManagers(trx, tenant, input.name, input.managers);
  }

  protected override async withRelated(db: Knex | Knex.Transaction, tenant: string, teams: Stored<TeamInput>[]): Promise<Stored<TeamInput>[]> {
    const managers = await managersOf(db, tenant, teams.map((t) => t.name));
    return teams.map((t) => ({ ...t, managers: managers.get(t.name) ?? [] }));
  }

  /**
   * Moves previousTeam to newTeam in one transaction: a rename when newTeam does not exist (memberships
   * follow), else a merge (members join newTeam keeping a manager flag, no duplicates; previousTeam is
   * deleted). The onTeamMigrated listeners run before the commit.
   */
  async migrate(tenant: string, previousTeam: string, newTeam: string): Promise<{ team: Stored<TeamInput>; migration: TeamMigration }> {
    if (previousTeam === newTeam) throw new ProblemError('SEC-TEAM-002', { message: 'previousTeam and newTeam are the same team' });
    try {
      return await this.knex.transaction(async (trx) => {
        await this.lock(trx, tenant, previousTeam);
        const target = await lockingRead(trx, trx(this.table).where({ tenant, name: newTeam }).first('id'));
        const moving = (await trx('security_memberships')
          .where({ tenant, kind: 'team', group_name: previousTeam })
          .select('identifier', 'manager')) as { identifier: string; manager: number | boolean }[];
        if (!target) {
          await trx(this.table).where({ tenant, name: previousTeam }).update({ name: newTeam, updated_at: this.clock() });
          await trx('security_memberships').where({ tenant, kind: 'team', group_name: previousTeam }).update({ group_name: newTeam });
        } else {
          const changes = moving.map((m) => (m.manager ? { identifier: m.identifier, manager: true } : { identifier: m.identifier }));
          await memberships.addMembers(trx, tenant, 'team', newTeam, changes);
          await memberships.removeGroup(trx, tenant, 'team', previousTeam);
          await trx(this.table).where({ tenant, name: previousTeam }).delete();
        }
        const migration: TeamMigration = {
          tenant,
          previousTeam,
          newTeam,
          mode: target ? 'merged' : 'renamed',
          members: moving.map((m) => m.identifier).sort(),
        };
        for (const listener of onTeamMigrated) await listener(trx, migration);
        const team = await this.find(trx, tenant, newTeam);
        return { team: team!, migration };
      });
    } catch (err) {
      // A team named newTeam created while this rename ran.
      if (isUniqueViolation(err)) throw new ProblemError('SEC-TEAM-004', { message: `A team named "${newTeam}" already exists` });
      throw err;
    }
  }
}
