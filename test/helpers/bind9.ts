/**
 * A real BIND9 (`named -g`, Debian's bind9 package) on a loopback port for the tests that resolve names or
 * publish dns-01 records: one zone whose every name (`*.<zone>`) resolves to 127.0.0.1, open to RFC 2136
 * updates signed with a TSIG key (hmac-sha256). Started once per test file, stopped by its PID at teardown.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../connectors/acme-upstream/pebble.js';
import { startDaemon } from './daemon.js';
import { tempDir, type TestContext } from './kernel.js';

export interface Bind9 {
  port: number;
  zone: string;
  /** TSIG key name, algorithm and secret (base64) for updates. */
  tsig: { name: string; algorithm: 'hmac-sha256'; secret: string };
  process: ChildProcess;
}

/**
 * `records`: more zone-file lines (`name IN CAA 0 issue "ca.example"`). `extraZones`: more zones served the same
 * way (open to the same TSIG key), zone → its extra lines, e.g. a validation zone that CNAMEs point into.
 */
export async function startBind9(t: TestContext, zone = 'acme.test', records: string[] = [], extraZones: Record<string, string[]> = {}): Promise<Bind9> {
  const dir = tempDir(t, 'cw-bind9-');
  const port = await freePort();
  const tsig = { name: 'certwright-test', algorithm: 'hmac-sha256' as const, secret: randomBytes(32).toString('base64') };
  writeFileSync(
    join(dir, 'zone.db'),
    [`$TTL 1`, `@ IN SOA ns.${zone}. admin.${zone}. 1 60 60 600 1`, `@ IN NS ns.${zone}.`, `ns IN A 127.0.0.1`, `@ IN A 127.0.0.1`, `* IN A 127.0.0.1`, ...records, ''].join('\n'),
  );
  for (const [extra, lines] of Object.entries(extraZones)) {
    writeFileSync(join(dir, `${extra}.db`), [`$TTL 1`, `@ IN SOA ns.${extra}. admin.${extra}. 1 60 60 600 1`, `@ IN NS ns.${extra}.`, `ns IN A 127.0.0.1`, ...lines, ''].join('\n'));
  }
  // The zone's parent (its top-level label) is served too, so lookups climbing the tree (CAA) get answers, not refusals.
  const parent = zone.split('.').slice(1).join('.');
  if (parent) writeFileSync(join(dir, 'parent.db'), [`$TTL 1`, `@ IN SOA ns.${parent}. admin.${parent}. 1 60 60 600 1`, `@ IN NS ns.${parent}.`, `ns IN A 127.0.0.1`, ''].join('\n'));
  writeFileSync(
    join(dir, 'named.conf'),
    `key "${tsig.name}" { algorithm ${tsig.algorithm}; secret "${tsig.secret}"; };
options {
  directory "${dir}";
  pid-file "${dir}/named.pid";
  listen-on port ${port} { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  dnssec-validation no;
  notify no;
};
controls { };
zone "${zone}" { type primary; file "${dir}/zone.db"; allow-update { key "${tsig.name}"; }; };
${Object.keys(extraZones).map((extra) => `zone "${extra}" { type primary; file "${dir}/${extra}.db"; allow-update { key "${tsig.name}"; }; };`).join('\n')}
${parent ? `zone "${parent}" { type primary; file "${dir}/parent.db"; };` : ''}
`,
  );
  // Its first line already says "running as: named …": ready is "running" after "all zones loaded".
  const child = await startDaemon(t, 'named', '/usr/sbin/named', ['-g', '-c', join(dir, 'named.conf'), '-n', '1'], (log) => /all zones loaded[\s\S]*\brunning\b/.test(log));
  return { port, zone, tsig, process: child };
}
