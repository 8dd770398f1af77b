import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ConfigError, loadConfig } from '../../../core/config/index.js';
import { tempDir } from '../../helpers/kernel.js';

t.test('defaults', async (t) => {
  const config = loadConfig({ env: {}, cwd: '/srv/cw' });
  t.equal(config.server.port, 9000);
  t.equal(config.server.host, 'localhost');
  t.equal(config.dataDir, '/srv/cw/data', 'the data dir is ./data, made absolute');
  t.equal(config.database.url, null, 'embedded SQLite by default');
  t.same(config.allowedHosts, ['localhost', '127.0.0.1', '::1']);
  t.equal(config.certwright.endpoints, null);
  t.ok(config.server.maxParamLength >= 8192, 'URL-encoded PEMs fit in a path parameter');
});

t.test('environment overrides', async (t) => {
  const config = loadConfig({
    env: {
      PORT: '9443',
      HOST: '0.0.0.0',
      DATABASE_URL: 'mysql://cw:pw@db.internal:3306/certwright',
      ALLOWED_HOSTS: ' pki.example.com, est.example.com ,,',
      CERTWRIGHT_DATA_DIR: '/var/lib/certwright',
      CERTWRIGHT_MASTER_KEY: 'a'.repeat(64),
      LOG_LEVEL: 'debug',
    },
  });
  t.equal(config.server.port, 9443);
  t.equal(config.server.host, '0.0.0.0');
  t.equal(config.database.url, 'mysql://cw:pw@db.internal:3306/certwright');
  t.same(config.allowedHosts, ['pki.example.com', 'est.example.com']);
  t.equal(config.dataDir, '/var/lib/certwright');
  t.equal(config.secrets.masterKey, 'a'.repeat(64));
  t.equal(config.log.level, 'debug');
});

t.test('CERTWRIGHT_CONFIG file layers over the defaults, and the environment over it', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'certwright.yaml');
  writeFileSync(
    file,
    `server:\n  port: 8443\ncertwright:\n  endpoints:\n    - host: est.example.com\n      est: true\n    - host: admin.example.com\n      configuration: true\n      events: true\nplugins:\n  paths: [/opt/plugins]\n`,
  );
  const config = loadConfig({ env: { CERTWRIGHT_CONFIG: file, PORT: '9999' } });
  t.equal(config.server.port, 9999, 'environment wins over the file');
  t.equal(config.server.bodyLimit, 1048576, 'untouched keys keep their defaults');
  t.same(config.plugins.paths, ['/opt/plugins']);
  t.equal(config.certwright.endpoints?.length, 2);
  t.match(config.certwright.endpoints?.[0], { host: 'est.example.com', est: true });
});

const refuses = (t: Test, name: string, load: () => unknown, key: RegExp, reason: RegExp) => {
  try {
    load();
    t.fail(`${name}: accepted`);
  } catch (err) {
    t.type(err, ConfigError, name);
    t.match((err as ConfigError).message, key, `${name}: names the key`);
    t.match((err as ConfigError).message, reason, `${name}: says why`);
    t.notOk((err as Error).message.includes('\n'), `${name}: one line`);
  }
};

t.test('bad values stop with one line naming the key and the reason', async (t) => {
  const dir = tempDir(t);
  refuses(t, 'PORT=abc', () => loadConfig({ env: { PORT: 'abc' } }), /PORT \(server\.port\)/, /integer/);
  refuses(t, 'PORT=70000', () => loadConfig({ env: { PORT: '70000' } }), /PORT/, /<= 65535/);
  refuses(t, 'LOG_LEVEL=loud', () => loadConfig({ env: { LOG_LEVEL: 'loud' } }), /LOG_LEVEL \(log\.level\)/, /one of fatal, error/);
  refuses(t, 'DATABASE_URL', () => loadConfig({ env: { DATABASE_URL: 'postgres://x/y' } }), /DATABASE_URL \(database\.url\)/, /format/);
  refuses(t, 'ALLOWED_HOSTS', () => loadConfig({ env: { ALLOWED_HOSTS: 'a.example,http://b.example' } }), /ALLOWED_HOSTS/, /format/);
  const secret = 'not-a-key-but-a-secret-anyway';
  refuses(t, 'master key', () => loadConfig({ env: { CERTWRIGHT_MASTER_KEY: secret } }), /CERTWRIGHT_MASTER_KEY/, /format/);
  try {
    loadConfig({ env: { CERTWRIGHT_MASTER_KEY: secret } });
  } catch (err) {
    t.notMatch((err as Error).message, secret, 'the rejected secret is not echoed');
  }
  const typo = join(dir, 'typo.yaml');
  writeFileSync(typo, 'server:\n  prot: 1\n');
  refuses(t, 'unknown key', () => loadConfig({ env: { CERTWRIGHT_CONFIG: typo } }), /server\.prot/, /not a known key/);
  const endpoint = join(dir, 'endpoint.yaml');
  writeFileSync(endpoint, 'certwright:\n  endpoints:\n    - host: a.example\n      est: yes-please\n');
  refuses(t, 'endpoint flag', () => loadConfig({ env: { CERTWRIGHT_CONFIG: endpoint } }), /certwright\.endpoints\.0\.est/, /boolean/);
  const yaml = join(dir, 'broken.yaml');
  writeFileSync(yaml, 'server: [unclosed\n');
  refuses(t, 'broken YAML', () => loadConfig({ env: { CERTWRIGHT_CONFIG: yaml } }), /CERTWRIGHT_CONFIG/, /YAML/);
  refuses(t, 'missing file', () => loadConfig({ env: { CERTWRIGHT_CONFIG: join(dir, 'nope.yaml') } }), /CERTWRIGHT_CONFIG/, /ENOENT/);
});
