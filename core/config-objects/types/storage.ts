import type { ConfigObjectType } from '@certwright/sdk';
import { description, objectName, reference } from './common.js';

/** Storage types the core provides itself (core/storage); plugins add theirs (an `s3` plugin, say). */
export const BUILT_IN_STORAGE_TYPES = ['filesystem', 'database'] as const;

/**
 * Storages (/api/v1/system/storages/): where heavy files the platform produces go (reports, archives).
 * `filesystem` writes below the data directory, `database` into the database; Horizon's `s3` fields are
 * accepted by the schema and need a plugin that provides the `s3` storage type.
 */
export function storageType(installedTypes: () => string[]): ConfigObjectType {
  return {
    type: 'storage',
    title: 'Storages',
    noun: 'storage',
    exportKey: 'storages',
    description: 'Destinations of the files the platform produces (reports, archives): the data directory, the database, or a plugin\'s storage type.',
    basePath: '/api/v1/system/storages/',
    tag: 'system',
    section: 'system',
    errorFamily: 'STORAGE',
    properties: {
      name: objectName,
      description,
      type: { type: 'string', minLength: 1, maxLength: 64, description: 'filesystem, database, or a type a storage plugin provides (s3)' },
      path: { type: 'string', maxLength: 1024, pattern: '^[0-9A-Za-z_.-]+(/[0-9A-Za-z_.-]+)*$', description: 'filesystem: the folder below <dataDir>/storages (default: the storage name)' },
      // Horizon's S3 storage fields (MCP storages.ts), for a plugin's s3 type.
      timeout: { type: 'string', maxLength: 64 },
      forcePathStyle: { type: 'boolean' },
      bucket: { type: 'string', maxLength: 255 },
      checksumMode: { type: 'string', enum: ['when_supported', 'when_required'] },
      partBufferSize: { type: 'string', maxLength: 64 },
      credentials: reference,
      roleArn: { type: 'string', maxLength: 2048 },
      region: { type: 'string', maxLength: 64 },
      proxy: reference,
      endpoint: { type: 'string', maxLength: 2048 },
    },
    required: ['name', 'type'],
    references: [
      { field: 'credentials', type: 'credential' },
      { field: 'proxy', type: 'http-proxy' },
    ],
    defaults: [{ name: 'default', type: 'filesystem', description: 'The data directory (storages/default)' }],
    hooks: {
      validate(object) {
        const type = object.type as string;
        const installed = [...BUILT_IN_STORAGE_TYPES, ...installedTypes()];
        if (!installed.includes(type)) return `type: no storage of type "${type}" is installed (installed: ${installed.join(', ')})`;
        if (type === 'filesystem' && typeof object.path === 'string' && object.path.split('/').some((p) => p === '..' || p === '.')) return 'path: must stay below <dataDir>/storages';
        if ((BUILT_IN_STORAGE_TYPES as readonly string[]).includes(type)) {
          const s3Only = ['timeout', 'forcePathStyle', 'bucket', 'checksumMode', 'partBufferSize', 'credentials', 'roleArn', 'region', 'proxy', 'endpoint'].find((f) => object[f] !== undefined);
          if (s3Only) return `${s3Only}: is not a field of a ${type} storage`;
        }
        if (type !== 'filesystem' && object.path !== undefined) return `path: is a field of filesystem storages only`;
      },
    },
  };
}
