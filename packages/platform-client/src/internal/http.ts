import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns'
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { JsonNumber, type JsonValue, parseStrict } from '@tollgate/strict-json'
import { createParser } from 'eventsource-parser'
import { isPublicAddress } from '../address.js'
import {
  BodyTooLarge,
  NetworkFailure,
  PlatformClientError,
  PrivateAddressRejected,
  RedirectRefused,
  type RequestPhase,
  RequestTimedOut,
} from '../errors.js'
import { STRICT_LIMITS } from '../limits.js'

/** One HTTP request exactly as it goes on the wire. */
export interface Outgoing {
  method: 'GET' | 'POST' | 'DELETE'
  url: URL
  /** The path exactly as sent and signed (REST: percent-encoded parameters); default the URL's own. */
  path?: string
  headers: Record<string, string>
  body: Buffer
}

export interface ExchangeOptions {
  phase: RequestPhase
  allowPrivate: boolean
  timeoutMs: number
  maxBodyBytes: number
  /** The JSON-RPC id whose answer ends an SSE stream. */
  expectId?: number | undefined
  /** false reads a text/event-stream answer as a plain body (REST answers are never streams). Default true. */
  sse?: boolean
  /** Nesting limit of the strict reader for this answer; default STRICT_LIMITS.maxDepth. */
  maxDepth?: number | undefined
  /** https only: the certificate authorities to trust instead of the bundled ones. */
  ca?: string | readonly string[] | undefined
}

/** What came back: a plain body, or from an SSE stream the data of the answering event (if any). */
export type Received =
  | { status: number; headers: IncomingHttpHeaders; kind: 'body'; body: Buffer }
  | { status: number; headers: IncomingHttpHeaders; kind: 'sse'; answer: Buffer | undefined }

/** Sends one request (no redirects followed, addresses checked at connect time) and reads the answer bounded. */
export function exchange(out: Outgoing, options: ExchangeOptions): Promise<Received> {
  return new Promise<Received>((resolve, reject) => {
    const send = out.url.protocol === 'https:' ? httpsRequest : httpRequest
    let settled = false
    let responding = false
    const finish = (error: unknown, value?: Received) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (error === undefined && value !== undefined) resolve(value)
      else reject(error instanceof PlatformClientError ? error : new NetworkFailure(describe(error), { cause: error }))
    }
    const req = send(
      out.url,
      {
        method: out.method,
        ...(out.path === undefined ? {} : { path: out.path }),
        headers: { ...out.headers, 'content-length': String(out.body.length) },
        lookup: guardedLookup(options.allowPrivate),
        agent: false,
        ...(options.ca !== undefined && out.url.protocol === 'https:' && { ca: options.ca as string | string[] }),
      },
      (res) => {
        // From here the response owns the outcome: a reset while reading is judged by the reader.
        responding = true
        const status = res.statusCode ?? 0
        if (status >= 300 && status < 400) {
          res.resume()
          finish(new RedirectRefused(status))
          req.destroy()
          return
        }
        const type = String(res.headers['content-type'] ?? '').toLowerCase()
        const reading =
          options.sse !== false && type.startsWith('text/event-stream') && status === 200
            ? readSse(res, options).then((answer) => ({ status, headers: res.headers, kind: 'sse' as const, answer }))
            : readBody(res, options.maxBodyBytes).then((body) => ({
                status,
                headers: res.headers,
                kind: 'body' as const,
                body,
              }))
        reading.then(
          (value) => {
            finish(undefined, value)
            // An SSE stream may stay open after our answer: we never keep or resume it.
            res.destroy()
          },
          (error: unknown) => {
            finish(error)
            res.destroy()
          },
        )
      },
    )
    const timer = setTimeout(() => {
      finish(new RequestTimedOut(options.timeoutMs))
      req.destroy()
    }, options.timeoutMs)
    req.on('error', (error) => {
      if (!responding) finish(error)
    })
    req.end(out.body)
  })
}

function readBody(res: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    res.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        reject(new BodyTooLarge(maxBytes))
        res.destroy()
        return
      }
      chunks.push(chunk)
    })
    let ended = false
    res.on('end', () => {
      ended = true
      resolve(Buffer.concat(chunks))
    })
    res.on('error', () => reject(new NetworkFailure('the response was cut')))
    res.on('close', () => {
      if (!ended) reject(new NetworkFailure('the response was cut'))
    })
  })
}

// Reads events until the one answering our id; an event that is not strict JSON is returned as the answer
// so the caller reports the exact strict-reading failure. undefined = the stream ended without an answer.
function readSse(res: IncomingMessage, options: ExchangeOptions): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    let size = 0
    let done = false
    const decoder = new TextDecoder('utf-8', { fatal: false })
    const parser = createParser({
      onEvent(event) {
        if (done) return
        const data = Buffer.from(event.data, 'utf8')
        if (isAnswer(data, options.expectId, options.maxDepth ?? STRICT_LIMITS.maxDepth)) {
          done = true
          resolve(data)
        }
      },
    })
    res.on('data', (chunk: Buffer) => {
      if (done) return
      size += chunk.length
      if (size > options.maxBodyBytes) {
        done = true
        reject(new BodyTooLarge(options.maxBodyBytes))
        return
      }
      parser.feed(decoder.decode(chunk, { stream: true }))
    })
    const end = () => {
      if (done) return
      parser.feed(decoder.decode())
      // An event not terminated by a blank line is discarded (as EventSource does): a cut event is no answer.
      if (!done) {
        done = true
        resolve(undefined)
      }
    }
    res.on('end', end)
    res.on('close', end)
    // A stream cut before our answer is a stream that ended without one (the platform counts it as a 5xx).
    res.on('error', end)
  })
}

function isAnswer(data: Buffer, expectId: number | undefined, maxDepth: number): boolean {
  let message: JsonValue
  try {
    message = parseStrict(data, { ...STRICT_LIMITS, maxDepth })
  } catch {
    return true
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message) || message instanceof JsonNumber) {
    return false
  }
  const id = message.id
  if (id === undefined || !('result' in message || 'error' in message)) return false
  return expectId === undefined || (id instanceof JsonNumber && id.lexeme === String(expectId))
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

// Checked at connect time too, so a name that resolves differently later still cannot reach a private address.
function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupAllOptions | object, callback: LookupCallback) => {
    dnsLookup(hostname, { ...(options as object), all: true, verbatim: true }, (error, addresses) => {
      if (error) return callback(error, [])
      if (!allowPrivate && addresses.some((a) => !isPublicAddress(a.address))) {
        return callback(Object.assign(new PrivateAddressRejected(), { errno: 0 }) as NodeJS.ErrnoException, [])
      }
      if ((options as LookupAllOptions).all) return callback(null, addresses)
      const first = addresses[0]
      if (!first) return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), [])
      return callback(null, first.address, first.family)
    })
  }
}

function describe(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : 'connection failed'
}
