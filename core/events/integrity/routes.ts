import type { FastifyInstance } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import type { Scheduler } from '../../scheduler/scheduler.js';
import { VERIFY_JOB } from './jobs.js';
import type { IntegrityRuns } from './runs.js';
import type { SigningKeys } from './signing-keys.js';

const tags = ['events'];
// Starting a full walk of the chain is a system operation; reading its outcome is part of searching events.
const RUN = { permission: 'configuration:system:write' } as const;
const READ = { permission: 'search:events' } as const;

const brokenSchema = {
  type: 'object',
  required: ['seq', 'id', 'reason'],
  properties: {
    seq: { type: 'integer', description: 'position in the chain of the first broken link' },
    id: { type: ['string', 'null'], description: 'the event at that position; null when it is missing' },
    reason: { type: 'string' },
  },
} as const;

const runSchema = {
  $id: 'EventIntegrityRun',
  type: 'object',
  required: ['id', 'status', 'startedAt', 'finishedAt', 'headSeq', 'checked', 'checkpoints', 'result'],
  properties: {
    id: { type: 'string' },
    status: {
      type: 'string',
      enum: ['running', 'succeeded', 'failed', 'error'],
      description: 'running; succeeded: the chain is intact; failed: a broken link was found (result.firstBroken); error: the check could not finish (error)',
    },
    startedAt: { type: 'integer', description: 'epoch ms' },
    finishedAt: { type: ['integer', 'null'], description: 'epoch ms' },
    headSeq: { type: ['integer', 'null'], description: 'the chain head when the run started: it verifies seq 1..headSeq' },
    checked: { type: 'integer', description: 'events verified so far (progress)' },
    checkpoints: { type: 'integer', description: 'signed checkpoints verified so far' },
    result: {
      type: ['object', 'null'],
      description: 'null until the run finishes',
      required: ['ok'],
      properties: { ok: { type: 'boolean' }, firstBroken: brokenSchema },
    },
    error: { type: 'string', description: 'why the check could not finish (status error)' },
  },
} as const;

/** GET /api/v1/events/integrity/run (start, or the run already running) and GET /api/v1/events/integrity/ (latest). */
export async function integrityRoutes(app: FastifyInstance, deps: { runs: IntegrityRuns; scheduler: Scheduler; keys: SigningKeys }): Promise<void> {
  const { runs, scheduler, keys } = deps;
  app.addSchema(runSchema);

  app.get('/api/v1/events/integrity/run', {
    config: { capability: 'events', access: RUN },
    schema: {
      tags,
      summary: 'Start an integrity check of the event chain (answers at once; the run already running if there is one)',
      response: { 202: { $ref: 'EventIntegrityRun#' } },
    },
    handler: async (_request, reply) => {
      const { run, created } = await runs.open();
      if (created) {
        try {
          await scheduler.now(VERIFY_JOB, { runId: run.id });
        } catch (err) {
          await runs.fail(run.id, `could not schedule the check: ${(err as Error).message}`);
          throw err;
        }
      }
      return reply.code(202).send(run);
    },
  });

  app.get('/api/v1/events/integrity/keys', {
    config: { capability: 'events', access: READ },
    schema: {
      tags,
      summary: 'The public keys that sign event chain checkpoints, to pin in an offline verifier (certwright events verify --key)',
      response: {
        200: {
          type: 'array',
          items: {
            type: 'object',
            required: ['keyId', 'publicKey', 'active', 'createdAt'],
            properties: {
              keyId: { type: 'string', description: 'sha256 of the SubjectPublicKeyInfo DER, hex: the keyId of the checkpoints it signs' },
              publicKey: { type: 'string', description: 'Ed25519 public key, PEM (SPKI)' },
              active: { type: 'boolean', description: 'signs new checkpoints (listed first)' },
              createdAt: { type: 'integer', description: 'epoch ms' },
            },
          },
        },
      },
    },
    handler: async () => keys.published(),
  });

  app.get('/api/v1/events/integrity/', {
    config: { capability: 'events', access: READ },
    schema: { tags, summary: 'The state and result of the latest integrity check of the event chain', response: { 200: { $ref: 'EventIntegrityRun#' } } },
    handler: async () => {
      const run = await runs.latest();
      if (!run) throw new ProblemError('EVT-INTEG-003');
      return run;
    },
  });
}
