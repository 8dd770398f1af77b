import type { ConfigObjectType } from '@certwright/sdk';
import { description, objectName, reference } from './common.js';
import { usableCredential } from './credentials.js';

/**
 * HTTP proxies (/api/v1/proxy/httpproxies/): `{name, host, port, credentials?}` as Horizon's clients send
 * them, plus `destinations` (host patterns: `example.com`, `*.example.com`, `*`) saying which outbound
 * calls go through it (core/egress picks the proxy whose patterns match a destination).
 */
export const httpProxyType: ConfigObjectType = {
  type: 'http-proxy',
  title: 'HTTP proxies',
  noun: 'HTTP proxy',
  exportKey: 'proxies',
  description: 'Forward proxies for the platform\'s and plugins\' outbound HTTP calls, chosen by destination.',
  basePath: '/api/v1/proxy/httpproxies/',
  tag: 'proxies',
  section: 'proxies',
  errorFamily: 'HTTP-PROXY',
  properties: {
    name: objectName,
    description,
    host: { type: 'string', minLength: 1, maxLength: 253, pattern: '^[0-9A-Za-z.:_\\[\\]-]+$', description: 'Host name, IPv4 or IPv6 address' },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    credentials: { ...reference, description: 'A `password` credential for Basic authentication to the proxy' },
    destinations: {
      type: 'array',
      maxItems: 256,
      items: { type: 'string', minLength: 1, maxLength: 253, pattern: '^(\\*|(\\*\\.)?[0-9A-Za-z._-]+)$' },
      description: 'Destination host patterns this proxy carries (`*` for every host); left out: none (the proxy is only used where named)',
    },
  },
  required: ['name', 'host', 'port'],
  references: [{ field: 'credentials', type: 'credential' }],
  hooks: {
    async validate(object, context) {
      if (typeof object.credentials === 'string') {
        const usable = usableCredential(await context.lookup('credential', object.credentials), object.credentials, 'password', 'proxy');
        if (!usable.ok) return `credentials: ${usable.reason}`;
      }
    },
  },
};
