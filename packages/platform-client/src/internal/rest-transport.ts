// REST (rest-binding.md): one signed request per attempt; the key in the Idempotency-Key header and in the
// signature's key field, the correlation ids in X-SupportRoute-* headers (request id new per attempt), the answer
// read strictly.
import { randomUUID } from 'node:crypto'
import { ERROR_ENVELOPE_REF, type KeyFieldFault, type ToolOutcome } from '../types.js'
import type { Endpoint } from './endpoint.js'
import { readRestAnswer } from './rest-answers.js'
import { pathPrefix, restRequestOf } from './rest-routes.js'
import type { ToolCall, ToolTransport } from './tool-transport.js'

export class RestTransport implements ToolTransport {
  readonly kind = 'rest'
  readonly #endpoint: Endpoint

  constructor(endpoint: Endpoint) {
    this.#endpoint = endpoint
  }

  async call({ name, outputRef, args, context, options }: ToolCall): Promise<ToolOutcome> {
    const endpoint = this.#endpoint
    const rest = restRequestOf(name, args)
    const url = await endpoint.url()
    const requestId = randomUUID()
    const path = pathPrefix(url) + rest.route
    const body = rest.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(rest.body), 'utf8')
    const headers = endpoint.headers(url)
    headers.accept = 'application/json'
    if (rest.method === 'POST') headers['content-type'] = 'application/json'
    headers['x-supportroute-request-id'] = requestId
    headers['x-supportroute-correlation-id'] = context.correlationId
    headers['x-supportroute-channel'] = context.channel
    if (context.externalTicket !== undefined) headers['x-supportroute-external-ticket'] = context.externalTicket
    const { signedKey, headerKey } = keyField(rest.idempotencyKey, options.keyFieldFault)
    if (headerKey !== undefined) headers['idempotency-key'] = headerKey
    const mode = options.signatureFor?.('rest') ?? 'valid'
    Object.assign(headers, endpoint.sign({ method: rest.method, host: url.host, path, body, key: signedKey }, mode))
    const received = await endpoint.exchange(
      { method: rest.method, url, path, headers, body },
      { phase: 'rest', timeoutMs: endpoint.timeoutWithin(options.deadline), sse: false },
    )
    const answer = readRestAnswer(received, outputRef, ERROR_ENVELOPE_REF)
    return { ...answer, era: null, requestId }
  }
}

// What the signature's key field covers and what the Idempotency-Key header carries; equal unless a probe asks.
function keyField(
  key: string | undefined,
  fault: KeyFieldFault | undefined,
): { signedKey: string; headerKey?: string } {
  if (fault === undefined) return key === undefined ? { signedKey: '' } : { signedKey: key, headerKey: key }
  if (key === undefined) throw new TypeError('keyFieldFault needs an idempotency_key in the arguments')
  if (fault === 'header_differs') return { signedKey: key, headerKey: `${key}:other` }
  if (fault === 'signed_empty') return { signedKey: '', headerKey: key }
  return { signedKey: key }
}
