// The gate's fast path and its kept bytes of settled answers, over real HTTP with the official clients: what a client
// gets is the same as through the SDK path (fastCalls: false), both eras; the budget is charged and refused on a
// kept answer exactly as on a fresh one; a window that can still change is never kept; the byte cap holds. The
// counters (gate.fastCalls) show which path answered, so these tests fail when the fast path or its kept bytes are
// switched off.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  type Budget,
  BudgetStoreError,
  createAudience,
  createInProcessIssuer,
  type InProcessIssuer,
  manualClock,
} from '@tollgate/gate'
import { createRatesTools, openSource, type RatesSource } from '../../src/rates/index.ts'
import { quenchzBudget, type RunningQuenchz, startQuenchz } from '../../src/server/start-quenchz.ts'
import { type AnyClient, CLIENT_PATHS, type ClientPath, connect, type ToolResult } from './support/clients.ts'
import { modernToolCall } from './support/raw-mcp.ts'
import { HISTORY_ZIP, NO_HISTORY } from './support/shared.ts'

const ISSUER = 'https://issuer.quenchz.invalid'
const RESOURCE = 'https://quenchz.invalid/mcp'
const SETTLED_CLOCK = () => new Date('2026-08-26T12:00:00Z')
const MONTH = { currency: 'USD', start: '2026-03-01', end: '2026-03-31' }
const FULL = { currency: 'USD', start: '1999-01-04', end: '2026-04-13' }
const FULL_JPY = { currency: 'JPY', start: '1999-01-04', end: '2026-04-13' }

describe('settled answers through the gate fast path', { skip: NO_HISTORY }, () => {
  let source: RatesSource
  let issuer: InProcessIssuer
  const servers: RunningQuenchz[] = []
  const clients: AnyClient[] = []

  const serve = async (options: {
    fastCalls?: boolean
    now?: () => Date
    settledAnswerBytes?: number
    budget?: Budget
  }) => {
    const server = await startQuenchz({
      tools: createRatesTools({ source, now: options.now ?? SETTLED_CLOCK }),
      audience: createAudience({ resource: RESOURCE, issuer: ISSUER, keys: issuer.keySource(), algorithms: ['RS256'] }),
      port: 0,
      ...(options.fastCalls !== undefined ? { fastCalls: options.fastCalls } : {}),
      ...(options.settledAnswerBytes !== undefined ? { settledAnswerBytes: options.settledAnswerBytes } : {}),
      ...(options.budget !== undefined ? { budget: options.budget } : {}),
    })
    servers.push(server)
    return server
  }
  const open = async (path: ClientPath, server: RunningQuenchz, subject = 'agent-alpha') => {
    const c = await connect(path, server.url, await issuer.mint({ subject, scopes: ['rates:read'] }))
    clients.push(c)
    return c
  }
  const counters = (server: RunningQuenchz) => {
    const fast = server.gate.fastCalls
    assert.ok(fast, 'the fast path is on')
    return { answered: fast.answered, fromSettledBytes: fast.fromSettledBytes }
  }

  before(async () => {
    source = await openSource({ kind: 'history', file: HISTORY_ZIP })
    issuer = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
  })
  after(async () => {
    for (const c of clients) await c.close()
    for (const s of servers) await s.close()
    await source?.close()
  })

  for (const path of CLIENT_PATHS) {
    test(`${path}: a kept answer is what the SDK path answers, and the fast path served it`, async () => {
      const fast = await serve({})
      const sdk = await serve({ fastCalls: false })
      const viaFast = await open(path, fast)
      const viaSdk = await open(path, sdk)
      const calls: Array<[string, Record<string, unknown>]> = [
        ['rates.window', MONTH],
        ['rates.window', FULL],
        ['rates.window', { currency: 'USD', start: '2026-04-01', end: '2026-05-01' }], // past the file: refused
        ['rates.window', { currency: 'USD', start: '20260401', end: '2026-04-02' }], // a caller fault
        ['rates.window', { currency: 'USD', start: '2026-04-01' }], // fails the input schema
        ['series.catalogue', {}], // not granted: concealed
        ['no.such.tool', {}],
        ['calendar.why', { day: '2026-04-03' }],
      ]
      const before = counters(fast)
      for (const [name, args] of calls) {
        const expected = await viaSdk.callTool(name, args)
        // Twice on the fast server: the second reply of a settled window is its kept bytes.
        for (let i = 0; i < 2; i++) {
          const got: ToolResult = await viaFast.callTool(name, args)
          assert.deepEqual(got, expected, `${name} ${JSON.stringify(args)}, call ${i + 1}`)
        }
      }
      const now = counters(fast)
      assert.equal(now.answered - before.answered, calls.length * 2, 'every call above was answered by the fast path')
      assert.equal(now.fromSettledBytes - before.fromSettledBytes, 2, 'the second month and full-history calls')
      assert.equal(sdk.gate.fastCalls, undefined)
    })
  }

  test('the budget is charged and refused on a kept answer exactly as on a fresh one', async () => {
    const outcomes = async (fastCalls: boolean) => {
      const server = await serve({ fastCalls, budget: quenchzBudget(manualClock().now) })
      const c = await open('v2-modern', server)
      const seen: string[] = []
      for (let i = 0; i < 50; i++) {
        const r = await c.callTool('rates.window', FULL)
        seen.push(r.isError === true ? (r.content[0]?.text ?? '') : 'served')
      }
      return { seen, server }
    }
    const viaSdk = await outcomes(false)
    const viaFast = await outcomes(true)
    assert.deepEqual(viaFast.seen, viaSdk.seen)
    // The digest's arithmetic: a lone greedy caller gets its reserve (15) and the spare (30), then is refused.
    assert.equal(viaFast.seen.filter((s) => s === 'served').length, 45)
    assert.equal(viaFast.seen.at(-1), 'this caller has spent its share of the upstream budget')
    assert.deepEqual(counters(viaFast.server), { answered: 50, fromSettledBytes: 44 })
  })

  test('a window that can still change is never served from kept bytes', async () => {
    // 12:00 UTC on the file's last day: 2026-04-13 is not yet past its deadline (17:00 Frankfurt), so the rates core
    // does not call this answer settled although the file already holds the day.
    const server = await serve({ now: () => new Date('2026-04-13T12:00:00Z') })
    const c = await open('v2-modern', server)
    const window = { currency: 'USD', start: '2026-04-01', end: '2026-04-13' }
    for (let i = 0; i < 3; i++) {
      const r = await c.callTool('rates.window', window)
      assert.notEqual(r.isError, true)
    }
    assert.deepEqual(counters(server), { answered: 3, fromSettledBytes: 0 })
  })

  test('the kept bytes stay under their cap: the least recently used answer goes first', async () => {
    // Room for one full history (about 0.37 MB) but not two.
    const server = await serve({ settledAnswerBytes: 600_000 })
    const c = await open('v2-modern', server)
    const fromBytes = async (args: Record<string, string>) => {
      const before = counters(server).fromSettledBytes
      const r = await c.callTool('rates.window', args)
      assert.notEqual(r.isError, true)
      return counters(server).fromSettledBytes - before
    }
    assert.equal(await fromBytes(FULL), 0) // built and kept
    assert.equal(await fromBytes(FULL), 1)
    assert.equal(await fromBytes(FULL_JPY), 0) // kept; USD goes to stay under the cap
    assert.equal(await fromBytes(FULL), 0) // serialised again, and kept; JPY goes
    assert.equal(await fromBytes(FULL), 1)
    assert.equal(await fromBytes(FULL_JPY), 0)
    const tiny = await serve({ settledAnswerBytes: 1000 })
    const t = await open('v2-modern', tiny)
    for (let i = 0; i < 2; i++) await t.callTool('rates.window', FULL)
    assert.deepEqual(counters(tiny), { answered: 2, fromSettledBytes: 0 }, 'larger than the cap: served, never kept')
  })

  test('a failing budget store gets the same answer on the fast path as through the SDK', async () => {
    const failing: Budget = {
      request: async () => {
        throw new BudgetStoreError()
      },
    }
    const raw = async (fastCalls: boolean) => {
      const server = await serve({ fastCalls, budget: failing })
      const token = await issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'] })
      const response = await fetch(server.url, {
        method: 'POST',
        ...modernToolCall(token, 'x-1', 'rates.window', MONTH),
      })
      return {
        status: response.status,
        type: response.headers.get('content-type'),
        body: await response.json(),
        fast: server.gate.fastCalls?.answered,
      }
    }
    const viaSdk = await raw(false)
    const viaFast = await raw(true)
    assert.equal(viaFast.fast, 1)
    assert.deepEqual({ ...viaFast, fast: undefined }, { ...viaSdk, fast: undefined })
    assert.match(JSON.stringify(viaFast.body), /the budget store could not be reached/)
  })
})
