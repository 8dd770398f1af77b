// Worker thread of bench/inventory's CertificateFactory: signs the certificates of the ranges it is sent and
// decodes them (parseCertificate), so that neither signing nor decoding runs on the main thread.
import { parentPort, workerData } from 'node:worker_threads';
import { parseCertificate } from '../../core/pki/x509/parse.js';
import { issueRange, issuersOf, type KeyMaterial, type WorkerAnswer, type WorkerRequest } from './inventory-generate.js';

const { keys, now } = workerData as { keys: KeyMaterial; now: number };
const issuers = issuersOf(keys);

parentPort!.on('message', ({ id, from, to }: WorkerRequest) => {
  let answer: WorkerAnswer;
  try {
    answer = { id, infos: issueRange(issuers, keys, from, to, now).map((der) => parseCertificate(der)) };
  } catch (err) {
    answer = { id, infos: [], error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
  parentPort!.postMessage(answer);
});
