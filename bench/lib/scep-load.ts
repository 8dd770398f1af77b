/**
 * The SCEP half of `npm run bench -- protocols`: GetCACert once, then PKCSReq messages built ahead of time
 * (RSA-2048 client keys reused across messages, a fresh CN and transactionID each, AES-256-CBC + SHA-256,
 * the profile's static challenge), posted at the benchmark's concurrency; every CertRep is opened and checked.
 */
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { buildPkiMessage, csrForScep, readCertRep, readDegenerateSignedData, selfSignedForScep } from '@certwright/sdk/scep';

const CLIENT_KEYS = 8;

interface Answer {
  status: number;
  body: Buffer;
}

export async function scepBench(o: {
  url: string;
  challenge: string;
  n: number;
  post: (url: string, body: Buffer) => Promise<Answer>;
  get: (url: string) => Promise<Answer>;
  measure: <J>(jobs: J[], one: (job: J) => Promise<void>) => Promise<number>;
}): Promise<number> {
  const caCert = await o.get(`${o.url}?operation=GetCACert`);
  if (caCert.status !== 200) throw new Error(`GetCACert: ${caCert.status} ${caCert.body.toString().slice(0, 200)}`);
  const [ra] = readDegenerateSignedData(new Uint8Array(caCert.body)).certificatesDer;
  if (!ra) throw new Error('GetCACert holds no certificate');
  const clients = Array.from({ length: CLIENT_KEYS }, (_, i) => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    return { privateKey, certificate: selfSignedForScep(privateKey, `scep-bench-client-${i}`) };
  });
  const run = randomBytes(3).toString('hex');
  const jobs: { der: Buffer; privateKey: KeyObject }[] = Array.from({ length: o.n }, (_, i) => {
    const client = clients[i % CLIENT_KEYS]!;
    const inner = csrForScep({ privateKey: client.privateKey, cn: `scep-${run}-${i}.bench.example.com`, challengePassword: o.challenge, digest: 'sha256' });
    const der = buildPkiMessage({ messageType: 'PKCSReq', transactionId: `${run}-${i}`, inner, signerCertificatePem: client.certificate.pem, signerPrivateKey: client.privateKey, recipientCertificatesDer: [ra], cipher: 'aes-256-cbc', digest: 'sha256' });
    return { der: Buffer.from(der), privateKey: client.privateKey };
  });
  return o.measure(jobs, async (job) => {
    const res = await o.post(`${o.url}?operation=PKIOperation`, job.der);
    if (res.status !== 200) throw new Error(`PKIOperation: ${res.status} ${res.body.toString().slice(0, 200)}`);
    const rep = readCertRep(new Uint8Array(res.body), { privateKey: job.privateKey });
    if (rep.pkiStatus !== 'SUCCESS' || !rep.signatureValid || !rep.certificatesDer?.length) throw new Error(`CertRep ${rep.pkiStatus} ${rep.failInfo ?? ''} ${rep.failInfoText ?? ''}`);
  });
}
