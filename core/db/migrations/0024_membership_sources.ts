import type { Knex } from 'knex';
import { exactCollation } from '../dialect.js';
import type { Migration } from '../migrator.js';

/**
 * Who granted a membership (security_memberships.granted_by): NULL for a membership granted by hand (the roles'
 * and teams' member routes, principal information) or by SCIM — every existing row; `idp:<provider name>` for one
 * an identity provider's claims granted at an interactive login (core/security/providers/claim-memberships.ts).
 * A later login of that provider drops only the rows it granted that its claims no longer name.
 */
export const membershipSources0024: Migration = {
  name: '0024_membership_sources',
  async up(knex: Knex) {
    const collation = await exactCollation(knex);
    await knex.schema.alterTable('security_memberships', (t) => {
      const column = t.string('granted_by', 200).nullable();
      if (collation) column.collate(collation);
    });
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('security_memberships', (t) => {
      t.dropColumn('granted_by');
    });
  },
};
