import type { CertwrightEvent, DeliveryResult, TriggerChannel } from '@certwright/sdk';

/** Longest detail kept from a channel (it ends up in the delivery row and the certificate's trigger result). */
const DETAIL_LENGTH = 1000;

/**
 * One call of a channel's send, bounded by `timeoutMs`. Whatever goes wrong (the channel throws, never
 * answers, answers garbage) is a retryable failure: a channel bug must never kill the worker, and the
 * next attempt may well succeed.
 */
export async function sendOnce(channel: TriggerChannel, event: CertwrightEvent, target: object, timeoutMs: number): Promise<DeliveryResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<DeliveryResult>((resolve) => {
    timer = setTimeout(() => resolve({ delivered: false, retryable: true, detail: `no answer within ${timeoutMs} ms` }), timeoutMs);
  });
  try {
    const result = await Promise.race([Promise.resolve().then(() => channel.send(event, target)), timeout]);
    if (!result || typeof result.delivered !== 'boolean') return { delivered: false, retryable: true, detail: 'the channel answered no delivery result' };
    const detail = typeof result.detail === 'string' ? result.detail.slice(0, DETAIL_LENGTH) : undefined;
    return { delivered: result.delivered, retryable: result.delivered ? false : result.retryable !== false, ...(detail !== undefined ? { detail } : {}) };
  } catch (err) {
    return { delivered: false, retryable: true, detail: `the channel failed: ${String((err as Error)?.message ?? err).slice(0, DETAIL_LENGTH)}` };
  } finally {
    clearTimeout(timer);
  }
}
