/** Environment variables that override configuration keys, and how each is read. */
export interface EnvBinding {
  name: string;
  path: string[];
  parse: (raw: string) => unknown;
}

/** Numbers that are not numbers stay strings, so validation names the variable and the reason. */
const integer = (raw: string): unknown => (/^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw);
const text = (raw: string): unknown => raw;
const list = (raw: string): unknown =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

export const ENV_BINDINGS: readonly EnvBinding[] = [
  { name: 'PORT', path: ['server', 'port'], parse: integer },
  { name: 'HOST', path: ['server', 'host'], parse: text },
  { name: 'TLS_PORT', path: ['server', 'tls', 'port'], parse: (raw) => (raw.trim().toLowerCase() === 'off' ? null : integer(raw)) },
  { name: 'DATABASE_URL', path: ['database', 'url'], parse: text },
  { name: 'ALLOWED_HOSTS', path: ['allowedHosts'], parse: list },
  { name: 'CERTWRIGHT_DATA_DIR', path: ['dataDir'], parse: text },
  { name: 'CERTWRIGHT_MASTER_KEY', path: ['secrets', 'masterKey'], parse: text },
  { name: 'CERTWRIGHT_ADMIN_SECRET', path: ['security', 'adminSecret'], parse: text },
  { name: 'LOG_LEVEL', path: ['log', 'level'], parse: text },
  { name: 'CERTWRIGHT_PUBLIC_URL', path: ['pki', 'publicBaseUrl'], parse: text },
];
