import type { ConfigObject, ConfigObjectType } from '@certwright/sdk';
import { schedulerCron } from '../../scheduler/tasks/cron.js';
import { localizedTexts, reference } from './common.js';

/** Horizon's system configuration entries (MCP system-configuration.ts): one per `type`, fields per type. */
const FIELDS: Record<string, readonly string[]> = {
  license: ['triggers'],
  internal_monitor: ['cron'],
  interface_customization: ['logo', 'headerStart', 'headerEnd', 'announcements'],
  storage: ['archiveStorage', 'magicLinkReportStorage'],
};
const nullableString = (max: number) => ({ type: ['string', 'null'], maxLength: max });
const triggerNames = { type: ['array', 'null'], maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 191 } };

/**
 * System configuration (/api/v1/system/configuration/: GET, GET /:type, PUT): the runtime-changeable
 * settings, one entry per type, created at first start and changed by PUT (no POST, no DELETE).
 */
export function systemConfigurationType(triggerExists: (db: unknown, tenant: string, name: string) => Promise<boolean>): ConfigObjectType {
  return {
    type: 'system-configuration',
    title: 'System configuration',
    noun: 'system configuration entry',
    exportKey: 'systemConfigurations',
    description: 'Runtime settings, one entry per type: license triggers, the internal monitor schedule, interface customization, the storages of archives and reports.',
    basePath: '/api/v1/system/configuration/',
    tag: 'system',
    section: 'system',
    errorFamily: 'SYSCONF',
    key: 'type',
    creatable: false,
    deletable: false,
    properties: {
      type: { type: 'string', enum: Object.keys(FIELDS) },
      triggers: {
        type: ['object', 'null'],
        additionalProperties: false,
        properties: { onLicenseExpiration: triggerNames, onLicenseUsage: triggerNames },
      },
      cron: { type: 'string', minLength: 1, maxLength: 128, description: 'Quartz cron expression of the internal monitor checks' },
      logo: nullableString(1_048_576),
      headerStart: { ...nullableString(16), pattern: '^#?[0-9A-Fa-f]{3,8}$' },
      headerEnd: { ...nullableString(16), pattern: '^#?[0-9A-Fa-f]{3,8}$' },
      announcements: {
        type: 'array',
        maxItems: 32,
        items: { type: 'object', additionalProperties: false, required: ['level', 'content'], properties: { level: { type: 'string', enum: ['info', 'warning', 'danger'] }, content: localizedTexts } },
      },
      archiveStorage: { anyOf: [reference, { type: 'null' }] },
      magicLinkReportStorage: { anyOf: [reference, { type: 'null' }] },
    },
    required: ['type'],
    references: [
      { field: 'archiveStorage', type: 'storage' },
      { field: 'magicLinkReportStorage', type: 'storage' },
    ],
    defaults: [
      { type: 'license' },
      { type: 'internal_monitor', cron: '0 0 0 ? * * *' },
      { type: 'interface_customization', announcements: [] },
      { type: 'storage', archiveStorage: 'default', magicLinkReportStorage: 'default' },
    ],
    hooks: {
      async validate(object: ConfigObject, context) {
        const type = object.type as string;
        const allowed = FIELDS[type]!;
        const stray = Object.keys(object).find((f) => f !== 'type' && !allowed.includes(f));
        if (stray) return `${stray}: is not a field of the ${type} entry (its fields: ${allowed.join(', ')})`;
        if (type === 'internal_monitor') {
          if (typeof object.cron !== 'string') return 'cron: is required';
          const converted = schedulerCron(object.cron);
          if (!converted.ok) return `cron: ${converted.reason}`;
        }
        if (type === 'license' && object.triggers && typeof object.triggers === 'object') {
          for (const [event, names] of Object.entries(object.triggers as Record<string, string[] | null>)) {
            for (const name of names ?? []) if (!(await triggerExists(context.db, context.tenant, name))) return `triggers.${event}: no trigger is named "${name}"`;
          }
        }
      },
    },
  };
}
