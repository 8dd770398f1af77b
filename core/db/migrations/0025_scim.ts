import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/**
 * SCIM 2.0 provisioning (core/security/scim): which principals a SCIM profile manages, and which of their
 * memberships it granted.
 *
 * - security_scim_users: one row per provisioned user. `id` is the SCIM id (a UUID), `identifier` the local
 *   principal it is (unique in the tenant: a principal belongs to at most one profile), `user_name_key` the
 *   userName lower-cased (SCIM userName is case-insensitive and unique per profile), `resource` the SCIM
 *   attributes as JSON (what a GET answers besides id, meta, active and groups).
 * - security_scim_grants: the memberships (security_memberships) a profile granted to one of its users, so
 *   deprovisioning removes those and leaves memberships granted by other means.
 */
export const scim0025: Migration = {
  name: '0025_scim',
  async up(knex: Knex) {
    // As the security tables they join (0004_security): names compare exactly under utf8mb4_bin on MySQL, the
    // tenant under the table's default collation (a join across collations is refused).
    const exact = (column: Knex.ColumnBuilder): Knex.ColumnBuilder => (knex.client.config.client === 'mysql2' ? column.collate('utf8mb4_bin') : column);
    await knex.schema.createTable('security_scim_users', (t) => {
      t.string('tenant', 64).notNullable();
      exact(t.string('profile', 191).notNullable());
      exact(t.string('id', 36).notNullable());
      exact(t.string('identifier', 191).notNullable());
      exact(t.string('user_name', 191).notNullable());
      exact(t.string('user_name_key', 191).notNullable());
      t.string('external_id', 255).nullable();
      t.text('resource', 'mediumtext').notNullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.primary(['tenant', 'id'], 'security_scim_users_pk');
      t.unique(['tenant', 'identifier'], { indexName: 'security_scim_users_identifier' });
      t.unique(['tenant', 'profile', 'user_name_key'], { indexName: 'security_scim_users_user_name' });
    });
    await knex.schema.createTable('security_scim_grants', (t) => {
      t.string('tenant', 64).notNullable();
      exact(t.string('identifier', 191).notNullable());
      t.string('kind', 8).notNullable();
      exact(t.string('group_name', 191).notNullable());
      exact(t.string('profile', 191).notNullable());
      t.primary(['tenant', 'identifier', 'kind', 'group_name'], 'security_scim_grants_pk');
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTableIfExists('security_scim_grants');
    await knex.schema.dropTableIfExists('security_scim_users');
  },
};
