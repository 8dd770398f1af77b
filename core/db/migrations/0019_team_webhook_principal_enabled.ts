import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/**
 * What the vendor's clients read and send on teams and principal information (client-compat, issue 23):
 * - a team's `webhook` {type, url}, the team's corporate channel (Teams, Slack/Mattermost); NULL = none.
 *   (A team's `managers` need no column: they are its members whose membership has the manager flag.)
 * - a principal information's `enabled` ("if the principal is allowed to login"): existing rows stay
 *   enabled. Its `creationDate` is the existing created_at.
 */
export const teamWebhookPrincipalEnabled0019: Migration = {
  name: '0019_team_webhook_principal_enabled',
  async up(knex: Knex) {
    await knex.schema.alterTable('security_teams', (t) => {
      t.string('webhook_type', 16).nullable();
      t.string('webhook_url', 2048).nullable();
    });
    await knex.schema.alterTable('security_principal_infos', (t) => {
      t.boolean('enabled').notNullable().defaultTo(true);
    });
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('security_principal_infos', (t) => {
      t.dropColumn('enabled');
    });
    await knex.schema.alterTable('security_teams', (t) => {
      t.dropColumn('webhook_url');
      t.dropColumn('webhook_type');
    });
  },
};
