/**
 * A real Knot DNS (`knotd`, Debian's knot package) on a loopback port for the RFC 2136 tests: one zone open to
 * dynamic updates signed with a TSIG key (an ACL with action `update` naming the key), run in the foreground with
 * its configuration, zone file, journal and control socket in a temporary folder. Started once per test file,
 * stopped by its PID at teardown.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../connectors/acme-upstream/pebble.js';
import { startDaemon } from './daemon.js';
import { tempDir, type TestContext } from './kernel.js';

export interface Knot {
  port: number;
  zone: string;
  /** TSIG key name, algorithm and secret (base64) allowed to update the zone. */
  tsig: { name: string; algorithm: 'hmac-sha256' | 'hmac-sha512'; secret: string };
  process: ChildProcess;
}

export async function startKnot(t: TestContext, zone = 'knot.test', options: { algorithm?: 'hmac-sha256' | 'hmac-sha512' } = {}): Promise<Knot> {
  const dir = tempDir(t, 'cw-knot-');
  const port = await freePort();
  const algorithm = options.algorithm ?? 'hmac-sha256';
  const tsig = { name: 'certwright-knot', algorithm, secret: randomBytes(algorithm === 'hmac-sha512' ? 64 : 32).toString('base64') };
  writeFileSync(
    join(dir, `${zone}.zone`),
    [`$ORIGIN ${zone}.`, `$TTL 1`, `@ IN SOA ns.${zone}. admin.${zone}. 1 60 60 600 1`, `@ IN NS ns.${zone}.`, `ns IN A 127.0.0.1`, `@ IN A 127.0.0.1`, ''].join('\n'),
  );
  writeFileSync(
    join(dir, 'knot.conf'),
    `server:
    rundir: "${dir}"
    listen: 127.0.0.1@${port}

log:
  - target: stderr
    any: info

key:
  - id: ${tsig.name}
    algorithm: ${tsig.algorithm}
    secret: ${tsig.secret}

acl:
  - id: update
    key: ${tsig.name}
    action: update

control:
    listen: "${dir}/knot.sock"

database:
    storage: "${dir}"

template:
  - id: default
    storage: "${dir}"
    file: "%s.zone"
    zonefile-sync: -1
    semantic-checks: off

zone:
  - domain: ${zone}
    acl: update
`,
  );
  const child = await startDaemon(t, 'knotd', '/usr/sbin/knotd', ['-c', join(dir, 'knot.conf')], (log) => /loaded, serial/.test(log) && /server started/.test(log));
  return { port, zone, tsig, process: child };
}
