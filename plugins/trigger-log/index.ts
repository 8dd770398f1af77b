import { definePlugin, type CertwrightEvent, type TriggerChannel } from '@certwright/sdk';

type Level = 'debug' | 'info' | 'warn' | 'error';
interface LogTarget {
  level?: Level;
}
const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];

/** The `log` trigger channel: one structured log line per event. Never fails, so never retried. */
export default definePlugin({
  register(ctx) {
    const log = ctx.logger.child({ channel: 'log' });
    const channel: TriggerChannel<LogTarget> = {
      validateTarget(target): target is LogTarget {
        if (typeof target !== 'object' || target === null) return false;
        const level = (target as LogTarget).level;
        return level === undefined || LEVELS.includes(level);
      },
      async send(event: CertwrightEvent, target: LogTarget) {
        const line = {
          event: { id: event.id, code: event.code, module: event.module, status: event.status, objectType: event.objectType, objectId: event.objectId },
          payload: event.payload,
        };
        log[target.level ?? 'info'](line, `event ${event.code}`);
        return { delivered: true, retryable: false };
      },
      preview(event) {
        return `event ${event.code} (${event.status}) on ${event.objectType ?? 'nothing'} ${event.objectId ?? ''}`.trim();
      },
    };
    ctx.registries.triggerChannels.register('log', channel);
  },
});
