// A fault-injecting HTTP proxy in front of the real provider: each fault breaks exactly one rule. It verifies
// what it receives like a provider would, re-signs what it forwards (its host differs from the provider's) and
// rewrites bytes on the way back.
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SignatureVerifier, secretEnvironment, signHeaders } from '@tollgate/signing'

export const FAULTS = [
  'none',
  'tool_call_signature_unchecked',
  'conflict_not_detected',
  'replay_differs',
  'float_amounts',
  'refund_amount_float',
  'duplicated_tool',
  'schema_defs',
  'foreign_ref',
  'deep_schema',
  'very_deep_schema',
  'six_pages',
  'five_pages',
  'missing_capability_tool',
  'no_cancel_capability',
  'list_never_answers',
] as const
/** REST-only faults (conflict_not_detected, replay_differs and float_amounts apply to REST as well). */
export const REST_FAULTS = [
  'none',
  'signature_ignores_key',
  'replay_differs',
  'replay_reformatted',
  'refusal_answered_400',
  'float_amounts',
  'conflict_not_detected',
  'dry_run_accepts_key',
] as const
export type Fault = (typeof FAULTS)[number] | (typeof REST_FAULTS)[number]

interface Upstream {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
}

type Msg = { id?: unknown; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown> }
type Tool = { name: string; inputSchema: Record<string, unknown>; outputSchema: Record<string, unknown> }

const HOP = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'x-supportroute-timestamp',
  'x-supportroute-signature',
])

export async function startFaultProxy(
  upstreamUrl: string,
  secret: string,
  fault: Fault,
  transport: 'mcp' | 'rest' = 'mcp',
): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(upstreamUrl)
  // A live check's proxy stands before a production provider: it verifies with the secret's own environment.
  const verifier = new SignatureVerifier({ environment: secretEnvironment(secret) ?? 'sandbox', secrets: [secret] })
  const refundKeysAnswered = new Set<string>()

  const forward = (
    method: string,
    path: string,
    headers: IncomingHttpHeaders,
    body: Buffer,
    resign: boolean,
  ): Promise<Upstream> =>
    new Promise((resolve, reject) => {
      const out: Record<string, string> = {}
      for (const [k, v] of Object.entries(headers)) if (!HOP.has(k) && typeof v === 'string') out[k] = v
      // Over REST the key field carries the Idempotency-Key header being forwarded (empty without one).
      const key = transport === 'rest' ? (header(headers, 'idempotency-key') ?? '') : ''
      if (resign) Object.assign(out, signHeaders(secret, { method, host: upstream.host, path, body, key }))
      else {
        // Forward the signature unchanged: signed for the proxy's host, the provider rejects it itself.
        for (const h of ['x-supportroute-timestamp', 'x-supportroute-signature'])
          if (typeof headers[h] === 'string') out[h] = headers[h] as string
      }
      const req = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method,
          path,
          headers: { ...out, 'content-length': String(body.length) },
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          )
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      req.end(body)
    })

  // The REST half: each fault breaks one rule of rest-binding.md, the rest is forwarded re-signed.
  const restKeysAnswered = new Set<string>()
  const serveRest = async (req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> => {
    const method = req.method ?? 'GET'
    const path = req.url ?? '/'
    const headers = { ...req.headers }
    const key = header(headers, 'idempotency-key')
    const verifies = (k: string) =>
      verifier.verify(
        {
          timestamp: header(headers, 'x-supportroute-timestamp'),
          signature: header(headers, 'x-supportroute-signature'),
        },
        { method, host: String(headers.host), path, body, key: k },
      ).ok
    // signature_ignores_key: also accepts the MCP form (an empty key field), so the key is not bound at all.
    const ok = verifies(key ?? '') || (fault === 'signature_ignores_key' && verifies(''))
    const refund = method === 'POST' && path.endsWith('/v1/refunds')
    const request = refund && ok ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : undefined
    if (fault === 'dry_run_accepts_key' && request?.dry_run === true) delete headers['idempotency-key']
    let answer = await forward(method, path, headers, body, ok)
    if (fault === 'conflict_not_detected' && refund && ok && answer.status === 409) {
      // The broken server treats a reused key with another request as a fresh call.
      headers['idempotency-key'] = `${key}:${randomUUID()}`
      answer = await forward(method, path, headers, body, true)
    }
    let status = answer.status
    let text = answer.body.toString('utf8')
    if (fault === 'float_amounts' && status === 200)
      text = text.replace(/"amount_minor":4999(?![0-9])/g, '"amount_minor":4999.0')
    // Only the amount refusal: cancel_again's already_canceled keeps its 422.
    if (fault === 'refusal_answered_400' && status === 422 && text.includes('"amount_exceeds_refundable"')) status = 400
    if (fault === 'replay_differs' && refund && status === 200 && key !== undefined && text.includes('"refund_ref"')) {
      if (restKeysAnswered.has(key)) text = text.replace(/"refund_ref":"([^"]*)"/, '"refund_ref":"$1_replayed"')
      restKeysAnswered.add(key)
    }
    // The same JSON in other bytes (a space after each colon): only a byte comparison sees it.
    if (fault === 'replay_reformatted' && refund && status === 200 && key !== undefined) {
      if (restKeysAnswered.has(key)) text = JSON.stringify(JSON.parse(text), null, 1)
      restKeysAnswered.add(key)
    }
    const out = Buffer.from(text, 'utf8')
    const back: Record<string, string> = {}
    for (const [k, v] of Object.entries(answer.headers)) if (!HOP.has(k) && typeof v === 'string') back[k] = v
    res.writeHead(status, { ...back, 'content-length': String(out.length) })
    res.end(out)
  }

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    let body = Buffer.concat(chunks)
    if (transport === 'rest') return serveRest(req, res, body)
    const method = req.method ?? 'POST'
    const path = req.url ?? '/'
    const verdict = verifier.verify(
      {
        timestamp: header(req.headers, 'x-supportroute-timestamp'),
        signature: header(req.headers, 'x-supportroute-signature'),
      },
      { method, host: String(req.headers.host), path, body, key: '' },
    )
    const msg: Msg | undefined = body.length > 0 ? JSON.parse(body.toString('utf8')) : undefined
    const tool = msg?.method === 'tools/call' ? String(msg.params?.name) : undefined
    // tools/list is never answered (the connection stays open until close()): whatever the profile budget and
    // however loaded the machine, the budget runs out first.
    if (fault === 'list_never_answers' && msg?.method === 'tools/list') return
    const acceptAny = fault === 'tool_call_signature_unchecked' && tool !== undefined
    const resign = verdict.ok || acceptAny

    // tools/list pagination is the proxy's own: the provider always gets an uncursored request.
    let page = 0
    if (
      (fault === 'six_pages' || fault === 'five_pages') &&
      msg?.method === 'tools/list' &&
      msg.params?.cursor !== undefined
    ) {
      page = Number(String(msg.params.cursor).slice(1))
      delete msg.params.cursor
      body = Buffer.from(JSON.stringify(msg))
    }
    let answer = await forward(method, path, req.headers, body, resign)

    if (
      resign &&
      tool === 'sr_refund' &&
      fault === 'conflict_not_detected' &&
      answer.body.includes('idempotency_conflict')
    ) {
      // The broken server treats a reused key with other parameters as a fresh call.
      const args = msg?.params?.arguments as Record<string, unknown>
      args.idempotency_key = `${String(args.idempotency_key)}:${randomUUID()}`
      answer = await forward(method, path, req.headers, Buffer.from(JSON.stringify(msg)), true)
    }
    let text = answer.body.toString('utf8')
    if (answer.status === 200) text = rewrite(text, (m) => transform(m))
    const out = Buffer.from(text, 'utf8')
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(answer.headers)) if (!HOP.has(k) && typeof v === 'string') headers[k] = v
    res.writeHead(answer.status, { ...headers, 'content-length': String(out.length) })
    res.end(out)

    function transform(raw: string): string {
      if (fault === 'float_amounts' && tool !== undefined)
        return raw.replace(/"amount_minor":4999(?![0-9])/g, '"amount_minor":4999.0')
      // Not a fault: a provider that does not offer cancel_subscription (the capability is optional).
      if (fault === 'no_cancel_capability' && tool === 'sr_describe')
        return raw
          .replace(/"cancel_subscription":true/g, '"cancel_subscription":false')
          .replace(/"cancel_at_period_end":true/g, '"cancel_at_period_end":false')
      // The seed's own example: sr_refund answers the refunded 2000 minor units as 2000.0.
      if (fault === 'refund_amount_float' && tool === 'sr_refund')
        return raw.replace(/"amount_minor":2000(?![0-9])/g, '"amount_minor":2000.0')
      if (fault === 'replay_differs' && tool === 'sr_refund') {
        const key = String((msg?.params?.arguments as Record<string, unknown> | undefined)?.idempotency_key ?? '')
        if (!raw.includes('"refund_ref"')) return raw
        if (refundKeysAnswered.has(key)) return raw.replace(/"refund_ref":"([^"]*)"/, '"refund_ref":"$1_replayed"')
        if (key !== 'undefined' && key !== '') refundKeysAnswered.add(key)
        return raw
      }
      if (msg?.method !== 'tools/list') return raw
      const parsed = JSON.parse(raw) as Msg
      const tools = parsed.result?.tools as Tool[] | undefined
      if (!parsed.result || !tools) return raw
      parsed.result.tools = listFault(tools, page)
      if (fault === 'six_pages' || fault === 'five_pages') {
        const pages = fault === 'six_pages' ? 6 : 5
        if (page + 1 < pages) parsed.result.nextCursor = `p${page + 1}`
      }
      return JSON.stringify(parsed)
    }
  })

  function listFault(tools: Tool[], page: number): Tool[] {
    const find = (name: string) => tools.find((t) => t.name === name) as Tool
    switch (fault) {
      case 'duplicated_tool':
        return [...tools, structuredClone(find('sr_refund'))]
      case 'schema_defs':
        find('sr_get_customer').inputSchema.$defs = { ref: { type: 'string' } }
        return tools
      case 'foreign_ref':
        find('sr_refund').outputSchema.$ref = 'https://example.com/schemas/refund-result.json'
        return tools
      case 'deep_schema': {
        const t = find('sr_get_transaction')
        let inner: Record<string, unknown> = { $ref: t.inputSchema.$ref }
        for (let i = 0; i < 20; i += 1) inner = { allOf: [inner] }
        t.inputSchema = { type: 'object', allOf: [inner] }
        return tools
      }
      case 'very_deep_schema': {
        // 300 levels: beyond what the platform's reader accepts in a tools/list page at all.
        const t = find('sr_get_transaction')
        let inner: Record<string, unknown> = { $ref: t.inputSchema.$ref }
        for (let i = 0; i < 300; i += 1) inner = { not: { not: inner } }
        t.inputSchema = { type: 'object', allOf: [inner] }
        return tools
      }
      case 'missing_capability_tool':
        return tools.filter((t) => t.name !== 'sr_cancel_subscription')
      case 'no_cancel_capability':
        return tools.filter((t) => t.name !== 'sr_cancel_subscription' && t.name !== 'sr_get_subscription')
      case 'six_pages':
      case 'five_pages': {
        const pages = fault === 'six_pages' ? 6 : 5
        // Contiguous pages of near-equal size, every page holding at least one tool.
        const cut = (i: number) => Math.round((i * tools.length) / pages)
        return tools.slice(cut(page), cut(page + 1))
      }
      default:
        return tools
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}${transport === 'rest' ? upstream.pathname.replace(/\/$/, '') : upstream.pathname}`,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name]
  return typeof v === 'string' ? v : undefined
}

// Applies f to a JSON body, or to each `data:` payload of an SSE body.
function rewrite(text: string, f: (json: string) => string): string {
  if (!text.startsWith('event:') && !text.startsWith('data:') && !text.startsWith(':') && !text.startsWith('id:')) {
    return text.trim() === '' ? text : f(text)
  }
  return text
    .split('\n')
    .map((line) => (line.startsWith('data: ') ? `data: ${f(line.slice(6))}` : line))
    .join('\n')
}
