/**
 * SCEP with micromdm's scepclient 2.1.0, which only speaks single DES and SHA-1 (its envelope whatever
 * GetCACaps says), POSTs when the caps allow it and encrypts to every GetCACert certificate, so it runs on an
 * RSA local CA and on profiles that allow legacy algorithms: an enrollment with a one-time challenge, a
 * renewal (RenewalReq, the same folder holding its certificate), a refusal on a profile that does not allow
 * its algorithms, and with a wrong challenge. Every certificate verifies with `openssl verify`. Runs on SQLite
 * and MariaDB.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { opensslVerifies, run, scepKernel } from './scep-kernel.js';

const scep = await scepKernel(t, { keyType: 'rsa-2048', profiles: [{ name: 'modern', protocols: { scep: { enabled: true } } }] });
let n = 0;

/** scepclient in a fresh folder (or `dir`, for a renewal); resolves with its exit and output. */
async function scepclient(profile: string, args: string[], dir?: string): Promise<{ ok: boolean; dir: string; output: string }> {
  const folder = dir ?? join(scep.dir, `client-${++n}`);
  mkdirSync(folder, { recursive: true });
  const res = await run('scepclient', ['-server-url', `${scep.http}/scep/${profile}/pkiclient.exe`, '-private-key', join(folder, 'key.pem'), '-certificate', join(folder, 'client.pem'), ...args], { cwd: folder, timeout: 60_000 }).then(
    (r) => ({ ok: true, output: r.stdout + r.stderr }),
    (e: { stdout?: string; stderr?: string }) => ({ ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
  );
  return { ...res, dir: folder };
}

t.test('enrollment with a one-time challenge, then a renewal', async (t) => {
  const challenge = await scep.challenge('default');
  const first = await scepclient('default', ['-challenge', challenge, '-cn', 'legacy1.example', '-keySize', '2048']);
  t.ok(first.ok, first.output);
  t.ok(existsSync(join(first.dir, 'client.pem')), 'client.pem written');
  t.ok(await opensslVerifies(scep, join(first.dir, 'client.pem')), 'openssl verify: OK');
  t.match((await run('openssl', ['x509', '-in', join(first.dir, 'client.pem'), '-noout', '-subject'])).stdout, /CN\s*=\s*legacy1\.example/);
  const serialBefore = (await run('openssl', ['x509', '-in', join(first.dir, 'client.pem'), '-noout', '-serial'])).stdout;

  const renewal = await scepclient('default', ['-cn', 'legacy1.example', '-keySize', '2048'], first.dir);
  t.ok(renewal.ok, renewal.output);
  const serialAfter = (await run('openssl', ['x509', '-in', join(first.dir, 'client.pem'), '-noout', '-serial'])).stdout;
  t.not(serialAfter, serialBefore, 'a new certificate replaced the old one');
  t.ok(await opensslVerifies(scep, join(first.dir, 'client.pem')));
  const renewed = await scep.kernel.db.knex('requests').where({ module: 'scep', workflow: 'renew', status: 'completed' }).count({ n: '*' });
  t.equal(Number(renewed[0]!.n), 1, 'the renewal is a renew request');
});

t.test('refused: legacy algorithms on a profile that does not allow them, and a wrong challenge', async (t) => {
  const modern = await scepclient('modern', ['-challenge', await scep.challenge('modern'), '-cn', 'legacy2.example']);
  t.notOk(modern.ok, 'DES and SHA-1 are refused on a profile without allowLegacyAlgorithms');
  t.match(modern.output, /badAlg|failInfo|FAILURE/i, modern.output);
  const wrong = await scepclient('default', ['-challenge', 'not-a-challenge', '-cn', 'legacy3.example']);
  t.notOk(wrong.ok, 'a wrong challenge enrolls nothing');
  t.notOk(existsSync(join(wrong.dir, 'client.pem')));
  const events = await scep.kernel.db.knex('events').where({ code: 'SCEP-REQUEST-FAILED' }).select('payload');
  t.ok(events.length >= 2, 'each refusal leaves an event');
  t.notMatch(JSON.stringify(events), /not-a-challenge/, 'never the challenge itself');
});
