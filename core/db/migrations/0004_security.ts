import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/**
 * The security core: local identities, principal information and group memberships, roles, teams,
 * password policies, identity providers, saved principal queries and dashboards, login throttling
 * counters and revoked sessions. JSON documents are TEXT (one representation on every engine); dates
 * are epoch milliseconds. Names and identifiers compare exactly, as on SQLite (MySQL's default
 * collation would make "Admin" and "admin" one account).
 *
 * JSON columns: `permissions` = [{value, filter?}], `display_name` / `description` = [{lang, value}],
 * `preferences` = an object, `policy` = the password policy fields, `config` = the provider instance's
 * configuration, `body` = the saved query or dashboard as the client sent it.
 */
const exact = (knex: Knex, column: Knex.ColumnBuilder): Knex.ColumnBuilder =>
  knex.client.config.client === 'mysql2' ? column.collate('utf8mb4_bin') : column;

const json = (t: Knex.CreateTableBuilder, name: string): void => {
  t.text(name, 'mediumtext').notNullable();
};

export const security0004: Migration = {
  name: '0004_security',
  async up(knex: Knex) {
    const stamps = (t: Knex.CreateTableBuilder): void => {
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
    };

    await knex.schema.createTable('security_local_identities', (t) => {
      t.string('id', 24).primary();
      t.string('tenant', 64).notNullable();
      exact(knex, t.string('identifier', 191).notNullable());
      t.string('name', 255).nullable();
      t.string('email', 320).nullable();
      // argon2id PHC string; NULL until a secret is set (such an account cannot log in).
      t.string('secret_hash', 255).nullable();
      t.bigInteger('secret_changed_at').nullable();
      t.boolean('enabled').notNullable().defaultTo(true);
      stamps(t);
      t.unique(['tenant', 'identifier'], { indexName: 'security_local_identities_key' });
    });

    await knex.schema.createTable('security_principal_infos', (t) => {
      t.string('id', 24).primary();
      t.string('tenant', 64).notNullable();
      exact(knex, t.string('identifier', 191).notNullable());
      t.string('name', 255).nullable();
      t.string('email', 320).nullable();
      json(t, 'permissions');
      json(t, 'preferences');
      stamps(t);
      t.unique(['tenant', 'identifier'], { indexName: 'security_principal_infos_key' });
    });

    // Who is in which role or team: one row per (group, principal), so "members of X" and "groups of Y"
    // are both index reads.
    await knex.schema.createTable('security_memberships', (t) => {
      t.string('tenant', 64).notNullable();
      t.string('kind', 8).notNullable(); // 'role' | 'team'
      exact(knex, t.string('group_name', 191).notNullable());
      exact(knex, t.string('identifier', 191).notNullable());
      // Teams only: the member manages the team (RA team membership, /api/v1/teams/:name/members).
      t.boolean('manager').notNullable().defaultTo(false);
      t.primary(['tenant', 'kind', 'group_name', 'identifier'], 'security_memberships_pk');
      t.index(['tenant', 'identifier', 'kind'], 'security_memberships_by_principal');
    });

    for (const table of ['security_roles', 'security_teams'] as const) {
      await knex.schema.createTable(table, (t) => {
        t.string('id', 24).primary();
        t.string('tenant', 64).notNullable();
        exact(knex, t.string('name', 191).notNullable());
        json(t, 'display_name');
        json(t, 'description');
        if (table === 'security_roles') {
          json(t, 'permissions');
        } else {
          t.string('contact', 320).nullable();
          t.boolean('externally_managed').notNullable().defaultTo(false);
        }
        stamps(t);
        t.unique(['tenant', 'name'], { indexName: `${table}_key` });
      });
    }

    await knex.schema.createTable('security_password_policies', (t) => {
      t.string('id', 24).primary();
      t.string('tenant', 64).notNullable();
      exact(knex, t.string('name', 191).notNullable());
      json(t, 'policy');
      stamps(t);
      t.unique(['tenant', 'name'], { indexName: 'security_password_policies_key' });
    });

    await knex.schema.createTable('security_identity_providers', (t) => {
      t.string('id', 24).primary();
      t.string('tenant', 64).notNullable();
      exact(knex, t.string('name', 191).notNullable());
      t.string('type', 64).notNullable();
      t.boolean('enabled').notNullable().defaultTo(true);
      json(t, 'config');
      stamps(t);
      t.unique(['tenant', 'name'], { indexName: 'security_identity_providers_key' });
    });

    // Per-principal documents: saved queries and dashboards.
    for (const table of ['security_principal_queries', 'security_dashboards'] as const) {
      await knex.schema.createTable(table, (t) => {
        t.string('id', 24).primary();
        t.string('tenant', 64).notNullable();
        exact(knex, t.string('principal', 191).notNullable());
        exact(knex, t.string('name', 191).notNullable());
        json(t, 'body');
        stamps(t);
        t.unique(['tenant', 'principal', 'name'], { indexName: `${table}_key` });
      });
    }

    // Failed-login counters, per identifier and per client address (shared by every node).
    await knex.schema.createTable('security_login_failures', (t) => {
      t.string('key', 255).primary();
      t.integer('failures').notNullable();
      t.bigInteger('last_failure_at').notNullable();
      t.bigInteger('locked_until').notNullable();
    });

    // Sessions are signed cookies; a logout records the token id here until the token would expire.
    await knex.schema.createTable('security_revoked_sessions', (t) => {
      t.string('jti', 64).primary();
      t.bigInteger('expires_at').notNullable();
      t.index(['expires_at'], 'security_revoked_sessions_expiry');
    });
  },
  async down(knex: Knex) {
    for (const table of [
      'security_revoked_sessions',
      'security_login_failures',
      'security_dashboards',
      'security_principal_queries',
      'security_identity_providers',
      'security_password_policies',
      'security_teams',
      'security_roles',
      'security_memberships',
      'security_principal_infos',
      'security_local_identities',
    ]) {
      await knex.schema.dropTableIfExists(table);
    }
  },
};
