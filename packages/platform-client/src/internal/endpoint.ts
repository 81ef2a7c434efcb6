// What both transports share about the provider they reach: its checked base URL, the headers every request
// carries, the signer, and the network rules each exchange obeys (private addresses, size, timeout, trusted CAs).
import type { SignedRequest } from '@tollgate/signing'
import { checkBaseUrl } from '../base-url.js'
import { type RequestPhase, RequestTimedOut } from '../errors.js'
import type { SignatureMode } from '../types.js'
import { exchange, type Outgoing, type Received } from './http.js'
import { RequestSigner } from './signer.js'

/** The client's options an endpoint reads. */
export interface EndpointSettings {
  baseUrl: string
  secret: string
  now: () => Date
  allowPrivate: boolean
  timeoutMs: number
  maxBodyBytes: number
  bearerToken?: string | undefined
  edgeHeaders?: Record<string, string> | undefined
  ca?: string | readonly string[] | undefined
}

/** How one answer is read: the request's phase and timeout, and what the reader expects of the answer. */
export interface Reading {
  phase: RequestPhase
  timeoutMs: number
  /** The JSON-RPC id whose answer ends an SSE stream. */
  expectId?: number | undefined
  maxDepth?: number | undefined
  /** false reads a text/event-stream answer as a plain body. */
  sse?: boolean
}

export class Endpoint {
  readonly #settings: EndpointSettings
  readonly #signer: RequestSigner
  #url: URL | undefined

  constructor(settings: EndpointSettings) {
    this.#settings = settings
    this.#signer = new RequestSigner(settings.secret, settings.now)
  }

  /** The base URL, checked once against the address rules (BaseUrlRejected, PrivateAddressRejected). */
  async url(): Promise<URL> {
    if (this.#url === undefined)
      this.#url = await checkBaseUrl(this.#settings.baseUrl, { allowPrivate: this.#settings.allowPrivate })
    return this.#url
  }

  /** Bearer token, edge headers and Host: sent on every request of both transports. */
  headers(url: URL): Record<string, string> {
    const headers: Record<string, string> = { ...(this.#settings.edgeHeaders ?? {}) }
    if (this.#settings.bearerToken !== undefined) headers.authorization = `Bearer ${this.#settings.bearerToken}`
    headers.host = url.host
    return headers
  }

  sign(request: SignedRequest, mode: SignatureMode): Record<string, string> {
    return this.#signer.sign(request, mode)
  }

  /** A request's timeout: timeoutMs, cut to what is left before the deadline (RequestTimedOut when nothing is). */
  timeoutWithin(deadline: number | undefined): number {
    const { timeoutMs } = this.#settings
    if (deadline === undefined) return timeoutMs
    const left = deadline - Date.now()
    if (left <= 0) throw new RequestTimedOut(0)
    return Math.min(timeoutMs, left)
  }

  /** Sends one request under the network rules and reads its answer bounded. */
  exchange(out: Outgoing, reading: Reading): Promise<Received> {
    const { allowPrivate, maxBodyBytes, ca } = this.#settings
    return exchange(out, { ...reading, allowPrivate, maxBodyBytes, ca })
  }
}
