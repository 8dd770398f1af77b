import type { Knex } from 'knex';

/** A team migration (PATCH /api/v1/security/teams/:previousTeam/:newTeam), as its listeners see it. */
export interface TeamMigration {
  tenant: string;
  previousTeam: string;
  newTeam: string;
  /** renamed: newTeam did not exist, previousTeam now has its name; merged: previousTeam's members joined newTeam and previousTeam is gone. */
  mode: 'renamed' | 'merged';
  /** The identifiers that were members of previousTeam. */
  members: string[];
}

export type TeamMigratedListener = (trx: Knex.Transaction, migration: TeamMigration) => Promise<void> | void;

/**
 * Listeners called inside the migration's transaction, after the team and its memberships have moved
 * and before the commit. Objects owned by teams live outside the security core: the inventory adds a
 * listener here to rewrite the `team` of certificates and requests from previousTeam to newTeam, in the
 * same transaction, so a migration is never half done. A listener must use `trx` only (SQLite has one
 * connection; another query would wait for this transaction forever); throwing rolls the whole
 * migration back and the PATCH answers the error.
 *
 * Process-wide: listeners take everything they need from `trx` and `migration`, so one list serves
 * every kernel of the process.
 */
export const onTeamMigrated = new Set<TeamMigratedListener>();
