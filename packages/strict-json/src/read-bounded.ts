import { readSync } from 'node:fs'
import { StrictJsonError } from './errors.js'

function checkMax(maxBytes: number): void {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0 || maxBytes >= 2 ** 31 - 1) {
    throw new RangeError('maxBytes must be a non-negative integer below 2^31-1')
  }
}

/**
 * Collects a byte stream, refusing it once more than `maxBytes` have arrived: throws ERR_STRICT_JSON_TOO_LARGE
 * and stops consuming (the iterator's return() is called, which destroys a Node stream).
 */
export async function readStreamBounded(stream: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer> {
  checkMax(maxBytes)
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of stream) {
    if (!(chunk instanceof Uint8Array)) throw new TypeError('stream must yield Uint8Array chunks')
    total += chunk.length
    if (total > maxBytes) throw new StrictJsonError('ERR_STRICT_JSON_TOO_LARGE', maxBytes)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, total)
}

/**
 * Reads an open descriptor to EOF, synchronously, reading at most `maxBytes + 1` bytes in total; throws
 * ERR_STRICT_JSON_TOO_LARGE when that extra byte exists. Does not close the descriptor. I/O errors propagate as-is.
 */
export function readFdBounded(fd: number, maxBytes: number): Buffer {
  checkMax(maxBytes)
  const buf = Buffer.allocUnsafe(maxBytes + 1)
  let total = 0
  while (total < buf.length) {
    const n = readSync(fd, buf, total, buf.length - total, null)
    if (n === 0) break
    total += n
  }
  if (total > maxBytes) throw new StrictJsonError('ERR_STRICT_JSON_TOO_LARGE', maxBytes)
  return buf.subarray(0, total)
}
