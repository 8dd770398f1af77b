import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { CoreServices } from '../services.js';
import { DeliveryQueue } from './deliveries.js';
import { DeliveryWorker } from './delivery-worker.js';
import { Dispatcher } from './dispatcher.js';
import { ExpiryScan } from './expiry-scan.js';
import { TriggerRepository } from './repository.js';

export const DISPATCH_JOB = 'triggers.dispatch';
export const DELIVER_JOB = 'triggers.deliver';
export const EXPIRY_SCAN_JOB = 'triggers.expiry-scan';

/**
 * The moving parts of triggers on one node. Three Agenda jobs keep them going whatever happens to a
 * node: `triggers.dispatch` (events → deliveries) and `triggers.deliver` (due deliveries → channels)
 * every triggers.dispatchEveryMs, `triggers.expiry-scan` every triggers.expiryScan.every. On a node
 * that processes jobs, an appended event also wakes dispatch and delivery at once, and a retry due
 * before the next run wakes delivery at its time. Both passes are safe to run anywhere at any time:
 * the database decides who does what (cursor lock, dedupe key, delivery claims).
 */
export class TriggerRuntime {
  readonly triggers: TriggerRepository;
  readonly queue: DeliveryQueue;
  readonly dispatcher: Dispatcher;
  readonly worker: DeliveryWorker;
  readonly expiry: ExpiryScan;
  private stopping = false;
  private running: Promise<void> | null = null;
  private again = false;
  private nudgeTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly logger: Logger;

  constructor(private readonly services: CoreServices) {
    const { knex, clock, events, secrets } = services;
    this.logger = services.logger.child({ component: 'triggers' });
    this.triggers = new TriggerRepository(knex, secrets, events, clock);
    this.queue = new DeliveryQueue(knex, clock);
    this.dispatcher = new Dispatcher(knex, this.triggers, this.queue, clock, this.logger);
    this.worker = new DeliveryWorker(services, this.queue, this.triggers, this.logger);
    this.expiry = new ExpiryScan(knex, events, this.triggers, clock, this.logger);
  }

  private readonly isStopping = (): boolean => this.stopping;

  /** Defines the jobs and their schedules, hooks the append nudge, and stops with the HTTP server. */
  async install(app: FastifyInstance): Promise<void> {
    const { scheduler, config } = this.services;
    scheduler.define(DISPATCH_JOB, () => this.pass());
    scheduler.define(DELIVER_JOB, () => this.pass());
    scheduler.define(EXPIRY_SCAN_JOB, async () => {
      const raised = await this.expiry.scan(this.isStopping);
      if (raised > 0) this.logger.info({ raised }, 'expiring certificates raised');
      this.nudge();
    });
    if (this.services.runsJobs) {
      await scheduler.every(config.triggers.dispatchEveryMs, DISPATCH_JOB);
      await scheduler.every(config.triggers.dispatchEveryMs, DELIVER_JOB);
      await scheduler.every(config.triggers.expiryScan.every, EXPIRY_SCAN_JOB);
    }
    const listener = (): void => this.nudge();
    this.services.events.appended.add(listener);
    app.addHook('onClose', async () => {
      this.stopping = true;
      this.services.events.appended.delete(listener);
      clearTimeout(this.nudgeTimer);
      clearTimeout(this.retryTimer);
      await this.running?.catch(() => undefined);
    });
  }

  /** Hint that there may be work: runs a pass soon, on a node that processes jobs. */
  nudge(delayMs = 10): void {
    if (this.stopping || !this.services.scheduler.agenda.isActiveJobProcessor()) return;
    if (this.nudgeTimer) return;
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = undefined;
      this.pass().catch((err: unknown) => this.logger.error({ err }, 'trigger pass failed'));
    }, delayMs);
    this.nudgeTimer.unref();
  }

  /**
   * Dispatch, then deliver whatever is due. One pass at a time on this node; a pass asked for while one
   * runs runs again right after it, so no nudge is lost.
   */
  pass(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.dispatcher.dispatch(this.isStopping);
          await this.worker.drain(this.isStopping);
        } while (this.again && !this.stopping);
        await this.wakeForRetry();
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** A retry due before the next scheduled run wakes delivery at its time. */
  private async wakeForRetry(): Promise<void> {
    if (this.stopping) return;
    const due = await this.queue.nextDue();
    if (due === null) return;
    const wait = Math.max(0, due - this.services.clock());
    if (wait >= this.services.config.triggers.dispatchEveryMs) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.nudge(0), wait + 5);
    this.retryTimer.unref();
  }
}

const runtimes = new WeakMap<FastifyInstance, TriggerRuntime>();
/** The trigger runtime of a kernel's app (tests and the CLI drive dispatch and delivery through it). */
export const triggerRuntimeOf = (app: FastifyInstance): TriggerRuntime | undefined => runtimes.get(app);
export const rememberRuntime = (app: FastifyInstance, runtime: TriggerRuntime): void => void runtimes.set(app, runtime);
