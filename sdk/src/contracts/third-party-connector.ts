/** A third-party system certificates are synchronised with (deploy, remove, discover). */
export interface ThirdPartyConnector {
  testConnection(): Promise<{ ok: boolean; detail?: string }>;
  deploy?(certificate: { id: string; pem: string; chainPem?: string[] }): Promise<{ id: string }>;
  remove?(thirdPartyId: string): Promise<void>;
  discover?(): AsyncIterable<{ pem: string; id: string }>;
}
