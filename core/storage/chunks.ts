/** What `put` takes: a buffer or a stream of bytes. */
export type StorageData = Buffer | AsyncIterable<Uint8Array>;

/** The data as a stream of buffers (a buffer is one piece). */
export async function* piecesOf(data: StorageData): AsyncGenerator<Buffer> {
  if (Buffer.isBuffer(data)) {
    yield data;
    return;
  }
  for await (const piece of data) yield Buffer.isBuffer(piece) ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
}

/** The data cut into pieces of exactly `size` bytes, the last one shorter (or empty when the data is). */
export async function* fixedChunks(data: StorageData, size: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let length = 0;
  let emitted = false;
  for await (const piece of piecesOf(data)) {
    pending.push(piece);
    length += piece.length;
    while (length >= size) {
      const whole = Buffer.concat(pending, length);
      yield whole.subarray(0, size);
      emitted = true;
      pending = [whole.subarray(size)];
      length -= size;
    }
  }
  if (length > 0 || !emitted) yield Buffer.concat(pending, length);
}
