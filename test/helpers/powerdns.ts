/**
 * A real PowerDNS Authoritative server (`pdns_server`, Debian's pdns-server + pdns-backend-sqlite3) on loopback
 * ports for the powerdns provisioner's tests: the gsqlite3 backend on a temporary database made from the package's
 * schema, the HTTP API on with a random key, caches off (so a query right after a change sees it), one Native zone
 * created through the API. Its configuration folder is a temporary one (never /etc/powerdns). Started once per test
 * file, stopped by its PID at teardown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { freePort } from '../connectors/acme-upstream/pebble.js';
import { tempDir, type TestContext } from './kernel.js';

const SCHEMA = '/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql';

export interface PowerDns {
  /** The DNS port (UDP and TCP) on 127.0.0.1. */
  port: number;
  /** Base URL of the HTTP API (http://127.0.0.1:<port>). */
  apiUrl: string;
  apiKey: string;
  zone: string;
  process: ChildProcess;
}

export async function startPowerDns(t: TestContext, zone = 'pdns.test'): Promise<PowerDns> {
  const dir = tempDir(t, 'cw-pdns-');
  const [port, webPort] = [await freePort(), await freePort()];
  const apiKey = randomBytes(24).toString('base64url');
  const db = new Database(join(dir, 'pdns.sqlite3'));
  db.exec(readFileSync(SCHEMA, 'utf8'));
  db.close();
  writeFileSync(join(dir, 'pdns.conf'), '');
  const args = [
    `--config-dir=${dir}`,
    '--launch=gsqlite3',
    `--gsqlite3-database=${join(dir, 'pdns.sqlite3')}`,
    '--api=yes',
    `--api-key=${apiKey}`,
    '--webserver=yes',
    '--webserver-address=127.0.0.1',
    `--webserver-port=${webPort}`,
    '--webserver-allow-from=127.0.0.1',
    '--local-address=127.0.0.1',
    `--local-port=${port}`,
    '--daemon=no',
    '--guardian=no',
    '--disable-syslog',
    `--socket-dir=${dir}`,
    '--cache-ttl=0',
    '--query-cache-ttl=0',
    '--negquery-cache-ttl=0',
    '--loglevel=4',
  ];
  const child = spawn('/usr/sbin/pdns_server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        process.kill(child.pid!, 'SIGTERM');
      }),
  );
  const apiUrl = `http://127.0.0.1:${webPort}`;
  const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (exited !== undefined) throw new Error(`pdns_server exited (${exited}):\n${log}`);
    const ok = await fetch(`${apiUrl}/api/v1/servers/localhost`, { headers }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`pdns_server did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const created = await fetch(`${apiUrl}/api/v1/servers/localhost/zones`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: `${zone}.`, kind: 'Native', nameservers: [`ns.${zone}.`] }),
  });
  if (created.status !== 201) throw new Error(`creating zone ${zone}: ${created.status} ${await created.text()}`);
  return { port, apiUrl, apiKey, zone, process: child };
}
