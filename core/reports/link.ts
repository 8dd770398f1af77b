import type { CertwrightConfig } from '../config/index.js';

/**
 * The address a mailed report link points to: `<base>/reports/<uuid>`. The base is the one other machines
 * reach the service at, as for the PKI publication URLs (pki.publicBaseUrl, else http://<server.host>:<server.port>,
 * the rule of core/pki/connectors/gateway.ts publicBaseUrl()).
 */
export function reportLink(config: CertwrightConfig, uuid: string): string {
  const configured = config.pki.publicBaseUrl;
  const { host, port } = config.server;
  const base = configured ? configured.replace(/\/+$/, '') : `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return `${base}/reports/${uuid}`;
}
