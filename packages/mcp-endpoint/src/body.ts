// The raw body, read once under three limits: a byte cap, a deadline for the whole body, and a cap on how many
// bodies may be unfinished at once (a slow sender holds a slot, never the whole server).
import type { IncomingMessage } from 'node:http'
import { EndpointConfigError, type EndpointErrorCode } from './errors.js'

export interface BodyLimits {
  /** Largest accepted body, bytes; a larger one is refused unread (Content-Length) or cut. Default 1 MiB. */
  maxBodyBytes?: number
  /** The whole body must arrive within this many ms of the reader starting. Default 30 000. */
  bodyTimeoutMs?: number
  /**
   * At most this many bodies being received at once. One more cuts the one that has been arriving longest (503 to
   * it), so a crowd of slow senders can never lock out callers whose bodies arrive at once. Default 256.
   */
  maxUnfinishedBodies?: number
}

/** Why a body was refused, with the HTTP status that says so. */
export type BodyRefusal =
  | { code: 'ERR_MCP_ENDPOINT_TOO_LARGE'; status: 413 }
  | { code: 'ERR_MCP_ENDPOINT_BODY_TIMEOUT'; status: 408 }
  | { code: 'ERR_MCP_ENDPOINT_BODY_ABORTED'; status: 400 }
  | { code: 'ERR_MCP_ENDPOINT_BUSY'; status: 503 }

export type BodyRead = { ok: true; body: Buffer } | ({ ok: false } & BodyRefusal)

const REFUSALS: Record<BodyRefusal['code'], BodyRefusal> = {
  ERR_MCP_ENDPOINT_TOO_LARGE: { code: 'ERR_MCP_ENDPOINT_TOO_LARGE', status: 413 },
  ERR_MCP_ENDPOINT_BODY_TIMEOUT: { code: 'ERR_MCP_ENDPOINT_BODY_TIMEOUT', status: 408 },
  ERR_MCP_ENDPOINT_BODY_ABORTED: { code: 'ERR_MCP_ENDPOINT_BODY_ABORTED', status: 400 },
  ERR_MCP_ENDPOINT_BUSY: { code: 'ERR_MCP_ENDPOINT_BUSY', status: 503 },
}
const refused = (code: BodyRefusal['code']): BodyRead => ({ ok: false, ...REFUSALS[code] })
const EMPTY = Buffer.alloc(0)

/** Human text of a body refusal (fixed; carries nothing from the request). */
export const BODY_REFUSAL_MESSAGES: Record<BodyRefusal['code'] & EndpointErrorCode, string> = {
  ERR_MCP_ENDPOINT_TOO_LARGE: 'the request body is too large',
  ERR_MCP_ENDPOINT_BODY_TIMEOUT: 'the request body did not arrive in time',
  ERR_MCP_ENDPOINT_BODY_ABORTED: 'the request body was cut off',
  ERR_MCP_ENDPOINT_BUSY: 'too many requests are being received; retry shortly',
}

function positiveInt(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new EndpointConfigError(`${name} must be a whole number ≥ 1`)
  return value
}

/**
 * Reads request bodies under {@link BodyLimits}. One reader is shared by every route of a server (MCP and REST), so
 * the unfinished-body cap counts them all.
 */
export class BodyReader {
  readonly maxBodyBytes: number
  readonly bodyTimeoutMs: number
  readonly maxUnfinishedBodies: number
  // Bodies being received, oldest first (a Set keeps insertion order); each entry cuts its body.
  readonly #unfinished = new Set<() => void>()

  constructor(limits: BodyLimits = {}) {
    this.maxBodyBytes = positiveInt('maxBodyBytes', limits.maxBodyBytes ?? 1_048_576)
    this.bodyTimeoutMs = positiveInt('bodyTimeoutMs', limits.bodyTimeoutMs ?? 30_000)
    this.maxUnfinishedBodies = positiveInt('maxUnfinishedBodies', limits.maxUnfinishedBodies ?? 256)
  }

  /** Bodies being received right now. */
  get unfinished(): number {
    return this.#unfinished.size
  }

  /**
   * Reads the whole body, or says why not. On a refusal the caller answers with `status` and `connection: close`
   * (the rest of the body is never read). Never throws.
   */
  read(req: IncomingMessage): Promise<BodyRead> {
    const declared = req.headers['content-length']
    if (declared !== undefined && Number(declared) > this.maxBodyBytes)
      return Promise.resolve(refused('ERR_MCP_ENDPOINT_TOO_LARGE'))
    // No Content-Length and no Transfer-Encoding: by HTTP/1.1 framing the request has no body (RFC 9112 §6.3), so
    // there is nothing to wait for. Body-less GETs (REST reads) skip the timer and listeners below.
    if (req.readableEnded || (declared === undefined && req.headers['transfer-encoding'] === undefined))
      return Promise.resolve({ ok: true, body: EMPTY })
    if (this.#unfinished.size >= this.maxUnfinishedBodies) {
      const oldest = this.#unfinished.values().next().value
      oldest?.()
    }
    return new Promise<BodyRead>((resolve) => {
      const chunks: Buffer[] = []
      let total = 0
      let settled = false
      const finish = (result: BodyRead) => {
        if (settled) return
        settled = true
        this.#unfinished.delete(cut)
        clearTimeout(timer)
        req.off('data', onData)
        req.off('end', onEnd)
        req.off('error', onAbort)
        req.off('close', onClose)
        // A refused body is not drained: the answer carries `connection: close` and the socket goes with it.
        if (!result.ok) req.pause()
        resolve(result)
      }
      const onData = (chunk: Buffer) => {
        total += chunk.length
        if (total > this.maxBodyBytes) finish(refused('ERR_MCP_ENDPOINT_TOO_LARGE'))
        else chunks.push(chunk)
      }
      const onEnd = () =>
        finish({ ok: true, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total) })
      const onAbort = () => finish(refused('ERR_MCP_ENDPOINT_BODY_ABORTED'))
      const onClose = () => {
        if (!req.complete) onAbort()
      }
      const timer = setTimeout(() => finish(refused('ERR_MCP_ENDPOINT_BODY_TIMEOUT')), this.bodyTimeoutMs)
      const cut = () => finish(refused('ERR_MCP_ENDPOINT_BUSY'))
      this.#unfinished.add(cut)
      req.on('data', onData)
      req.on('end', onEnd)
      req.on('error', onAbort)
      req.on('close', onClose)
    })
  }
}
