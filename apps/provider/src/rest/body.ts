// Reads a request's raw bytes with a cap, for signing and then strict parsing. Kept in this one function so it can
// be swapped for the shared endpoint body reader (packages/mcp-endpoint) without touching the binding.
import type { IncomingMessage } from 'node:http'
import { readStreamBounded, StrictJsonError } from '@tollgate/strict-json'

export type BodyRead = { kind: 'ok'; body: Buffer } | { kind: 'too_large' } | { kind: 'failed' }

export async function readRequestBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  // A declared length over the cap is refused before a byte is read.
  const declared = req.headers['content-length']
  if (declared !== undefined && /^[0-9]+$/.test(declared) && Number(declared) > maxBytes) {
    req.resume()
    return { kind: 'too_large' }
  }
  try {
    return { kind: 'ok', body: await readStreamBounded(req, maxBytes) }
  } catch (error) {
    return error instanceof StrictJsonError ? { kind: 'too_large' } : { kind: 'failed' }
  }
}
