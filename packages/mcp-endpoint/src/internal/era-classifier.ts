// The door's era routing: the SDK's own classifier (classifyInboundRequest), fed the parsed message, with the one
// shortcut below for repeats.
import type { IncomingMessage } from 'node:http'
import { classifyInboundRequest } from '@modelcontextprotocol/server'
import type { PlainToolCall } from '../tool-call.js'

/** How many distinct `_meta` objects the door remembers the SDK classified as modern (see EraClassifier). */
export const MODERN_META_VERDICTS = 64

/** A request header's first value. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name]
  return Array.isArray(v) ? v[0] : v
}

// The SDK's era classifier validates with zod v4, whose per-parse WeakMaps carry every parse's objects through the
// next scavenge and into the old space: measured at ~9 000 calls/s, 1.5 MB promoted per scavenge, scavenges of
// ~4 ms instead of 0.2 ms and a mark-compact every second or two that stalls the event loop for tens of ms, which
// every other caller's call waits out. For a plain 2026-07-28 tools/call (modernToolCall: the headers, the
// top-level and params keys, the id's type and the method all fixed), the classifier's verdict depends only on
// `_meta` (the envelope it validates); the other params are never looked at. So a "modern" verdict is kept by
// `_meta`'s JSON (at most MODERN_META_VERDICTS of them) and a repeat skips the classifier. Every other verdict is
// never kept: those requests meet the SDK's classifier every time.
export class EraClassifier {
  readonly #modernMetas = new Set<string>()
  /** How many POSTed messages the SDK's classifier was run on (a diagnostic: repeats skip it). */
  sdkClassified = 0

  /** The SDK's verdict on a POSTed message (`modern`, `legacy`, or a refusal of its own). */
  classify(message: unknown, req: IncomingMessage, plainCall: PlainToolCall | undefined): string {
    const metaKey = plainCall === undefined ? undefined : `${typeof plainCall.id}:${JSON.stringify(plainCall.meta)}`
    if (metaKey !== undefined && this.#modernMetas.has(metaKey)) return 'modern'
    this.sdkClassified++
    const { kind } = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: header(req, 'mcp-protocol-version'),
      mcpMethodHeader: header(req, 'mcp-method'),
      mcpNameHeader: header(req, 'mcp-name'),
      body: message,
    } as Parameters<typeof classifyInboundRequest>[0])
    if (kind === 'modern' && metaKey !== undefined && this.#modernMetas.size < MODERN_META_VERDICTS)
      this.#modernMetas.add(metaKey)
    return kind
  }
}
