// The era shortcut in front of the SDK's classifier must never route a message the classifier would not route to
// the 2025-era leg; and it must actually take the common 2025-era messages (else it saves nothing).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { classifyInboundRequest, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server'
import { isPlainLegacy } from '../src/internal/plain-legacy.js'

const modernMeta = {
  [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
}
const paramsVariants: unknown[] = [
  undefined,
  {},
  { name: 'sr_refund', arguments: { amount_minor: 1 } },
  [],
  null,
  'x',
  7,
  { _meta: {} },
  { _meta: null },
  { _meta: [] },
  { _meta: { progressToken: 1 } },
  { _meta: { [PROTOCOL_VERSION_META_KEY]: '2025-11-25' } },
  { _meta: { [PROTOCOL_VERSION_META_KEY]: 42 } },
  { _meta: modernMeta },
  { name: 'sr_refund', _meta: modernMeta },
  { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' }, _meta: modernMeta },
]
const ids: unknown[] = ['absent', 1, 0, -1, 1.5, 'a', '', null, true, {}, []]
const methods: unknown[] = [
  'absent',
  'tools/call',
  'initialize',
  'notifications/initialized',
  'ping',
  'server/discover',
  7,
  '',
]
const extras: Record<string, unknown>[] = [{}, { result: {} }, { error: { code: 1, message: 'm' } }, { jsonrpc: '1.0' }]
const headers: (string | undefined)[] = [
  undefined,
  '2025-11-25',
  '2025-06-18',
  '2024-11-05',
  '2026-07-28',
  '2027-01-01',
  ' 2025-11-25',
  '2025-11-25 ',
  'garbage',
  '',
  '9999',
]

function* corpus(): Generator<{ body: unknown; header: string | undefined }> {
  for (const params of paramsVariants)
    for (const id of ids)
      for (const method of methods)
        for (const extra of extras)
          for (const header of headers) {
            const body: Record<string, unknown> = { jsonrpc: '2.0', ...extra }
            if (method !== 'absent') body.method = method
            if (id !== 'absent') body.id = id
            if (params !== undefined) body.params = params
            yield { body, header }
          }
  for (const body of [
    null,
    1,
    'x',
    [],
    [{ jsonrpc: '2.0', method: 'ping', id: 1 }],
    { jsonrpc: '2.0', id: 1, result: {} },
  ])
    for (const header of headers) yield { body, header }
}

const sdkKind = (body: unknown, header: string | undefined) =>
  classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: header,
    body,
  } as Parameters<typeof classifyInboundRequest>[0]).kind

test('the shortcut never calls legacy what the SDK classifier does not', () => {
  let taken = 0
  let cases = 0
  for (const { body, header } of corpus()) {
    cases++
    if (!isPlainLegacy(body, header)) continue
    taken++
    assert.equal(sdkKind(body, header), 'legacy', `${JSON.stringify(body)} with header ${JSON.stringify(header)}`)
  }
  assert.ok(cases > 10_000, `corpus of ${cases}`)
  assert.ok(taken > 500, `the shortcut took ${taken} of ${cases}`)
})

test('the shortcut takes the messages of a 2025-era session: initialize, initialized, tools/call', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  }
  const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' }
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', arguments: {} } }
  assert.equal(isPlainLegacy(initialize, undefined), true)
  assert.equal(isPlainLegacy(initialized, '2025-11-25'), true)
  assert.equal(isPlainLegacy(call, '2025-11-25'), true)
  // A modern call is the classifier's to decide.
  assert.equal(isPlainLegacy({ ...call, params: { name: 't', _meta: modernMeta } }, undefined), false)
  assert.equal(isPlainLegacy(call, '2026-07-28'), false)
})
