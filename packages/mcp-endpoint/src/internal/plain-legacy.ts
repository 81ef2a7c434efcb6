// A shortcut in front of the SDK's era classifier. classifyInboundRequest first tries the two JSON-RPC response
// schemas, and on a request each failed zod parse builds its issue list: most of the classifier's cost, paid by
// three of a 2025-era attempt's four requests. A posted response is legacy to the classifier anyway; a request or
// notification that claims no modern envelope and names no modern MCP-Protocol-Version is legacy by its rules once
// the SDK's own isJSONRPCRequest / isJSONRPCNotification accept it. Anything else goes to the classifier.
// test/plain-legacy.test.ts pins that this never disagrees with it.
import { isJSONRPCNotification, isJSONRPCRequest, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server'

/** The first 2026-07-28-era revision: the classifier calls a version modern when it compares ≥ this string. */
const FIRST_MODERN = '2026-07-28'
const DATE = /^\d{4}-\d{2}-\d{2}$/

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** true only when the SDK's classifier would route this POST to the 2025-era leg; false means "ask the classifier". */
export function isPlainLegacy(message: unknown, protocolVersionHeader: string | undefined): boolean {
  if (!isObject(message)) return false
  if (
    protocolVersionHeader !== undefined &&
    !(DATE.test(protocolVersionHeader) && protocolVersionHeader < FIRST_MODERN)
  )
    return false
  const params = message.params
  if (isObject(params) && isObject(params._meta) && PROTOCOL_VERSION_META_KEY in params._meta) return false
  return 'id' in message ? isJSONRPCRequest(message) : isJSONRPCNotification(message)
}
