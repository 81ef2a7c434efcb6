// What the bench's callers send, shared by the load process (autocannon) and the bench script's own node:http legs:
// platform-shaped refund keys, the refund pool, and the MCP bodies and headers of both eras.
import { randomUUID } from 'node:crypto'

export const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
}
export const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

/** A UUIDv7: the time in ms, then a v4 UUID's random bits (its variant nibble kept). */
function uuid7(): string {
  const time = Date.now().toString(16).padStart(12, '0')
  const r = randomUUID() // xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx
  return `${time.slice(0, 8)}-${time.slice(8)}-7${r.slice(15, 18)}-${r.slice(19, 23)}-${r.slice(24)}`
}

/**
 * An idempotency key shaped like the platform's (seed 002: `<merchant uuid7>:ticket:<ticket uuid7>:refund:<uuid7>`,
 * 124 characters, time-ordered): the keys' length and order decide how the provider's key indexes grow, so the bench
 * sends what the platform sends (short counter keys made refunds ~5% faster than real ones).
 */
export const platformKey = () => `0199a3c1-0a0b-7c0d-8e0f-101112131415:ticket:${uuid7()}:refund:${uuid7()}`

let refundSeq = 0
/**
 * A refund of 1 minor unit on the next charge of the demo data's refund pool (256 charges, `ch_9100` … `ch_9355`,
 * so a run piles tens of refunds onto each).
 */
export function refundRequest() {
  return {
    transaction_ref: `ch_9${100 + (++refundSeq % 256)}`,
    amount: { amount_minor: 1, currency: 'USD' },
    reason: 'goodwill',
    dry_run: false,
  }
}

/** The bench's tools: the provider's, or the peers' one no-op tool. */
export type BenchTool = 'read' | 'refund' | 'noop'
/** A scenario's tool on the provider (the peers answer it with their no-op). */
export type ProviderTool = Exclude<BenchTool, 'noop'>

/** What the answer to a call must include and must not, checked by both load clients. */
export interface AnswerChecks {
  bodyIncludes?: string
  bodyExcludes?: string
}

/** What is wrong with a call's answer body under checks, or undefined when nothing is. */
export function answerProblem(body: string, checks: AnswerChecks): string | undefined {
  if (checks.bodyIncludes !== undefined && !body.includes(checks.bodyIncludes)) return `no ${checks.bodyIncludes}`
  if (checks.bodyExcludes !== undefined && body.includes(checks.bodyExcludes)) return checks.bodyExcludes
  return undefined
}

/** A tools/call's name and arguments; a refund under a fresh platform-shaped key each time. */
export function toolCall(tool: BenchTool): { name: string; args: Record<string, unknown> } {
  if (tool === 'noop') return { name: 'noop', args: {} }
  if (tool === 'read') return { name: 'sr_get_transaction', args: { transaction_ref: 'ch_1001' } }
  return { name: 'sr_refund', args: { idempotency_key: platformKey(), request: refundRequest() } }
}

let callSeq = 0
/** A 2026-07-28 single-request tools/call: its body and headers. */
export function modernCallRequest(tool: BenchTool): { body: string; headers: Record<string, string> } {
  const { name, args } = toolCall(tool)
  return {
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++callSeq,
      method: 'tools/call',
      params: { name, arguments: args, _meta: ENVELOPE },
    }),
    headers: {
      ...JSON_HEADERS,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
  }
}

/** A 2025-era attempt's requests: initialize, initialized, the call, then a DELETE, all after initialize with the
 * session id it answered (legacySessionHeaders). */
export const LEGACY_INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
})
export const LEGACY_INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })
export function legacyCallBody(tool: BenchTool): string {
  const { name, args } = toolCall(tool)
  return JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } })
}
/** Headers of an attempt's requests after initialize. */
export function legacySessionHeaders(session: string | undefined): Record<string, string> {
  return {
    ...JSON_HEADERS,
    'mcp-protocol-version': '2025-11-25',
    ...(session !== undefined && { 'mcp-session-id': session }),
  }
}
