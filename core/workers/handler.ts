/**
 * What a pool thread runs for each task (loaded by worker.mjs). Errors do not cross threads with their
 * class, so a ProblemError comes back as its code, message and detail, and anything else as a failure.
 */
import { move } from 'piscina';
import { ProblemError } from '../errors/index.js';
import { decodeNow, JSON_ANSWER_KINDS, type DecodeTask, type TaskOutcome } from './decode-tasks.js';

/** Bytes arrive as a plain Uint8Array (structured clone drops Buffer): back to a Buffer, as the route had it. */
const asBuffer = (input: unknown): unknown => (input instanceof Uint8Array && !Buffer.isBuffer(input) ? Buffer.from(input.buffer, input.byteOffset, input.byteLength) : input);

export default function runTask(task: DecodeTask): TaskOutcome {
  try {
    const value = decodeNow({ ...task, input: asBuffer(task.input) } as DecodeTask);
    if (!JSON_ANSWER_KINDS.includes(task.kind)) return { value };
    // Its own ArrayBuffer (not a slice of Buffer's shared pool), moved to the event loop without a copy.
    return move(new TextEncoder().encode(JSON.stringify(value))) as Uint8Array;
  } catch (err) {
    if (err instanceof ProblemError) return { problem: { code: err.code, message: err.message, ...(err.detail !== undefined ? { detail: err.detail } : {}) } };
    return { failure: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
}
