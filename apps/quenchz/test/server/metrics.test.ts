// quenchz's metrics and health in process, over real HTTP with the official SDK clients: every counter moved by the
// request that should move it (calls by tool and outcome, budget charged and refused by caller, 429s, token and Host
// refusals, upstream fetches and cache hits), the queue and session gauges read at scrape time, label values bounded,
// the exposition accepted by promtool, and /livez and /readyz on the main port before the Host guard and the token.
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import {
  createAudience,
  createInProcessIssuer,
  FairBudget,
  FairScheduler,
  type GatedTool,
  type InProcessIssuer,
  manualClock,
} from '@tollgate/gate'
import { Health, type RunningAdminServer, startAdminServer } from '@tollgate/operability'
import { parseExposition, probePromtool, promtoolCheckMetrics, type Sample, sampleSum } from '@tollgate/test-support'
import { createRatesTools, type LiveSource, openSource, parseIsoDay } from '../../src/rates/index.js'
import { windowPath } from '../../src/rates/sources/live.js'
import { ISSUER, RESOURCE } from '../../src/server/constants.js'
import { createQuenchzMetrics, type QuenchzMetrics } from '../../src/server/metrics.js'
import { type RunningQuenchz, startQuenchz } from '../../src/server/start-quenchz.js'
import { reply, startReplayServer } from '../rates/support/replay-server.js'
import { EASTER_2026, LONG_AFTER, sdmxCsv, tempDir } from '../rates/support/shared.js'
import { type AnyClient, connect } from './support/clients.js'
import { legacyInitialize, modernToolCall } from './support/raw-mcp.js'

const day = (iso: string) => parseIsoDay(iso) as number

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** One HTTP request with any Host header and body (fetch cannot set Host). */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: options.method ?? 'GET',
        headers: options.headers,
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          body += c
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      },
    )
    req.on('error', reject)
    req.end(options.body)
  })
}

/** A tool whose calls wait until released: calls in service and waiting can then be counted. */
function heldTool(): { tool: GatedTool; release(): void } {
  let release = () => {}
  let held = new Promise<void>((r) => {
    release = r
  })
  return {
    tool: {
      name: 'test.hold',
      scope: 'rates:read',
      description: 'Answers once released.',
      inputSchema: { type: 'object' },
      async call() {
        await held
        return { ok: true, structuredContent: {}, text: '{}' }
      },
    },
    release() {
      release()
      held = Promise.resolve()
    },
  }
}

describe('quenchz metrics', () => {
  const cleanups: Array<() => unknown> = []
  let issuer: InProcessIssuer
  let running: RunningQuenchz
  let admin: RunningAdminServer
  let metrics: QuenchzMetrics
  let health: Health
  let source: LiveSource
  const hold = heldTool()
  const tokens: Record<string, string> = {}

  before(async () => {
    const upstream = await startReplayServer()
    cleanups.push(() => upstream.close())
    upstream.routes.set(
      windowPath('USD', day('2026-03-30'), day('2026-04-10')),
      reply(200, 'application/vnd.sdmx.data+csv; version=1.0.0', sdmxCsv(EASTER_2026)),
    )
    const t = tempDir()
    cleanups.push(t.cleanup)
    metrics = createQuenchzMetrics({ namedCallers: ['agent-alpha', 'agent-beta'], processMetrics: false })
    source = (await openSource(
      { kind: 'live', baseUrl: upstream.baseUrl, cacheFile: join(t.dir, 'cache.sqlite') },
      metrics.upstream,
    )) as LiveSource
    cleanups.push(() => source.close())
    issuer = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
    health = new Health({ cacheMs: 0 })
    running = await startQuenchz({
      tools: [...createRatesTools({ source, now: () => LONG_AFTER }), hold.tool],
      audience: createAudience({ resource: RESOURCE, issuer: ISSUER, keys: issuer.keySource(), algorithms: ['RS256'] }),
      port: 0,
      // Reserves of 3 each and a shared spare of 4 (binary-exact fractions), on a clock that never moves: a lone
      // caller's eighth call is over budget.
      budget: new FairBudget({
        capacity: 16,
        refillPerSecond: 16,
        reserveFraction: 0.75,
        callers: ['agent-alpha', 'agent-beta', 'agent-gamma', 'agent-delta'],
        clock: manualClock().now,
      }),
      scheduler: new FairScheduler({ perCaller: 1, maxWaitingPerCaller: 1 }),
      metrics,
      health,
    })
    cleanups.push(() => running.close())
    admin = await startAdminServer({ port: 0, registry: metrics.registry, health })
    cleanups.push(() => admin.close())
    for (const sub of ['agent-alpha', 'agent-beta', 'agent-gamma', 'carol'])
      tokens[sub] = await issuer.mint({ subject: sub, scopes: ['rates:read'], lifetimeSeconds: 600 })
  })
  after(async () => {
    hold.release()
    for (const c of cleanups.reverse()) await c()
  })

  const scrape = async (): Promise<{ text: string; samples: Sample[] }> => {
    const r = await send(`${admin.url}/metrics`)
    assert.equal(r.status, 200)
    return { text: r.body, samples: parseExposition(r.body) }
  }

  test('calls by tool and outcome, budget charged by caller and source, refusals by caller (others as `other`)', async () => {
    const before = (await scrape()).samples
    const alpha = await connect('v2-modern', running.url, tokens['agent-alpha'] as string)
    const carol = await connect('v2-modern', running.url, tokens.carol as string)
    try {
      // agent-alpha: three units from its reserve, four from the spare, then over budget.
      const easter = { currency: 'USD', start: '2026-03-30', end: '2026-04-10' }
      assert.equal((await alpha.callTool('rates.window', easter)).isError, undefined)
      assert.equal((await alpha.callTool('rates.window', easter)).isError, undefined)
      assert.equal((await alpha.callTool('no.such-tool-7f3a', {})).isError, true)
      assert.equal((await alpha.callTool('calendar.why', { day: 'not a day' })).isError, true)
      for (let i = 0; i < 3; i++)
        assert.equal((await alpha.callTool('calendar.why', { day: '2026-04-03' })).isError, undefined)
      assert.equal((await alpha.callTool('rates.window', easter)).isError, true)
      // carol holds no reserve (this budget names its callers): refused, counted under `other`, never under her name.
      assert.equal((await carol.callTool('calendar.why', { day: '2026-04-03' })).isError, true)
    } finally {
      await alpha.close()
      await carol.close()
    }
    const { text, samples } = await scrape()
    const moved = (name: string, labels: Record<string, string>) =>
      sampleSum(samples, name, labels) - sampleSum(before, name, labels)
    assert.equal(moved('quenchz_tool_calls_total', { tool: 'rates.window', outcome: 'served' }), 2)
    assert.equal(moved('quenchz_tool_calls_total', { tool: 'none', outcome: 'no-such-tool' }), 1)
    assert.equal(moved('quenchz_tool_calls_total', { tool: 'calendar.why', outcome: 'refused' }), 1)
    assert.equal(moved('quenchz_tool_calls_total', { tool: 'calendar.why', outcome: 'served' }), 3)
    assert.equal(moved('quenchz_tool_calls_total', { tool: 'rates.window', outcome: 'over-budget' }), 1)
    assert.equal(moved('quenchz_tool_calls_total', { tool: 'calendar.why', outcome: 'unknown-caller' }), 1)
    assert.equal(moved('quenchz_tool_calls_total', {}), 9)
    assert.equal(moved('quenchz_tool_call_duration_seconds_count', { tool: 'rates.window' }), 3)
    assert.equal(moved('quenchz_budget_charged_total', { caller: 'agent-alpha', from: 'reserve' }), 3)
    assert.equal(moved('quenchz_budget_charged_total', { caller: 'agent-alpha', from: 'spare' }), 4)
    assert.equal(moved('quenchz_budget_refused_total', { caller: 'agent-alpha', reason: 'spent' }), 1)
    assert.equal(moved('quenchz_budget_refused_total', { caller: 'other', reason: 'unknown-caller' }), 1)
    assert.equal(moved('quenchz_budget_refused_total', { caller: 'other', reason: 'spent' }), 0)
    // Bounded labels: neither the unknown tool's name nor an unconfigured caller's sub ever becomes a label value.
    assert.doesNotMatch(text, /no\.such-tool-7f3a|carol|agent-gamma/)
  })

  test('upstream requests by result and cache hits: a window asked three times is fetched once', async () => {
    const before = (await scrape()).samples
    const sentBefore = source.requestsSent
    const beta = await connect('v2-modern', running.url, tokens['agent-beta'] as string)
    try {
      const eve = { currency: 'USD', start: '2026-03-30', end: '2026-04-10' }
      for (let i = 0; i < 3; i++) assert.equal((await beta.callTool('rates.window', eve)).isError, undefined)
    } finally {
      await beta.close()
    }
    const { samples } = await scrape()
    const moved = (name: string, labels: Record<string, string> = {}) =>
      sampleSum(samples, name, labels) - sampleSum(before, name, labels)
    // The first test fetched the window already: every one of these three came from the cache.
    assert.equal(moved('quenchz_upstream_cache_hits_total'), 3)
    assert.equal(moved('quenchz_upstream_requests_total', { result: '2xx' }), 0)
    // Every request the source sent is counted once, whatever its result (the catalogue query gets this server's 404).
    assert.equal(sampleSum(samples, 'quenchz_upstream_requests_total'), source.requestsSent)
    assert.ok(sentBefore > 0)
    assert.equal(sampleSum(samples, 'quenchz_upstream_requests_total', { result: '2xx' }), 1)
    assert.equal(
      sampleSum(samples, 'quenchz_upstream_request_duration_seconds_count'),
      sampleSum(samples, 'quenchz_upstream_requests_total'),
    )
  })

  test('queue depth and calls in service are read at scrape time; a full queue is a 429 counted once', async () => {
    const gamma = tokens['agent-gamma'] as string
    const clients: AnyClient[] = []
    for (let i = 0; i < 2; i++) clients.push(await connect('v2-modern', running.url, gamma))
    const refusedBefore = sampleSum((await scrape()).samples, 'quenchz_queue_full_total')
    // perCaller 1 and one waiting place: the first call is served (and held), the second waits.
    const first = (clients[0] as AnyClient).callTool('test.hold', {})
    const second = (clients[1] as AnyClient).callTool('test.hold', {})
    let samples: Sample[] = []
    for (let i = 0; i < 500; i++) {
      samples = (await scrape()).samples
      if (sampleSum(samples, 'quenchz_calls_waiting') === 1) break
      await new Promise((r) => setTimeout(r, 10))
    }
    assert.equal(sampleSum(samples, 'quenchz_calls_in_service'), 1)
    assert.equal(sampleSum(samples, 'quenchz_calls_waiting'), 1)
    // The third is refused at once: 429 with Retry-After, nothing charged. Only the body is modernToolCall's: this
    // request carries no Mcp-Method/Mcp-Name headers.
    const third = await send(running.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${gamma}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
      },
      body: modernToolCall(gamma, 1, 'test.hold', {}).body,
    })
    assert.equal(third.status, 429)
    assert.equal(sampleSum((await scrape()).samples, 'quenchz_queue_full_total') - refusedBefore, 1)
    hold.release()
    await Promise.all([first, second])
    for (const c of clients) await c.close()
    samples = (await scrape()).samples
    assert.equal(sampleSum(samples, 'quenchz_calls_in_service'), 0)
    assert.equal(sampleSum(samples, 'quenchz_calls_waiting'), 0)
  })

  test('open 2025-era sessions: one per legacy session opened, one less once it is deleted; none for 2026-07-28', async () => {
    const open = async () => sampleSum((await scrape()).samples, 'quenchz_sessions_open')
    const base = await open()
    const token = tokens['agent-beta'] as string
    const modern = await connect('v2-modern', running.url, token)
    const v1 = await connect('v1', running.url, token)
    const legacy = await connect('v2-legacy', running.url, token)
    assert.equal(await open(), base + 2)
    // A session ends when its client deletes it (or after 15 minutes unseen); closing a client leaves it open.
    const init = await legacyInitialize(running.url, token, 1)
    assert.equal(init.status, 200)
    await init.arrayBuffer()
    const id = init.headers.get('mcp-session-id') as string
    assert.equal(await open(), base + 3)
    const deleted = await fetch(running.url, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}`, 'mcp-session-id': id },
    })
    assert.equal(deleted.status, 200)
    assert.equal(await open(), base + 2)
    for (const c of [modern, v1, legacy]) await c.close()
  })

  test('token refusals by reason and Host refusals by status; no token text in any label', async () => {
    const before = (await scrape()).samples
    const missing = await send(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    assert.equal(missing.status, 401)
    const forged = await send(running.url, {
      method: 'POST',
      headers: { authorization: 'Bearer not.a.jwt-7f3a', 'content-type': 'application/json' },
      body: '{}',
    })
    assert.equal(forged.status, 401)
    const foreign = await send(running.url, { method: 'POST', headers: { host: 'evil.example' }, body: '{}' })
    assert.equal(foreign.status, 421)
    const { text, samples } = await scrape()
    const moved = (name: string, labels: Record<string, string>) =>
      sampleSum(samples, name, labels) - sampleSum(before, name, labels)
    assert.equal(moved('quenchz_token_refusals_total', { reason: 'ERR_GATE_TOKEN_MISSING' }), 1)
    assert.equal(moved('quenchz_token_refusals_total', { reason: 'ERR_GATE_TOKEN_INVALID' }), 1)
    assert.equal(moved('quenchz_host_refusals_total', { status: '421' }), 1)
    assert.doesNotMatch(text, /7f3a|evil\.example/)
  })

  test('promtool accepts the exposition', async (t) => {
    const { skip } = probePromtool()
    if (skip !== undefined) return t.skip(skip)
    const { text } = await scrape()
    const checked = promtoolCheckMetrics(text)
    assert.ok(checked.ok, checked.output)
  })

  test('/livez and /readyz on the main port: any Host, no token, fixed bodies; /metrics is not there', async () => {
    for (const host of [`127.0.0.1:${running.port}`, 'lb-probe.internal']) {
      const live = await send(`http://127.0.0.1:${running.port}/livez`, { headers: { host } })
      assert.deepEqual([live.status, live.body], [200, 'ok\n'])
      const ready = await send(`http://127.0.0.1:${running.port}/readyz?verbose=1`, { headers: { host } })
      assert.deepEqual([ready.status, ready.body], [200, 'ok\n'])
      assert.equal(ready.headers['cache-control'], 'no-store')
    }
    assert.equal((await send(`http://127.0.0.1:${running.port}/readyz`, { method: 'POST' })).status, 405)
    assert.equal((await send(`http://127.0.0.1:${running.port}/metrics`)).status, 404)
    // A failing dependency: 503 with the same fixed body on both ports, naming nothing.
    health.setCheck('budget-store', async () => {
      throw new Error('redis at 10.0.0.7:6379 refused (password hunter2)')
    })
    for (const base of [`http://127.0.0.1:${running.port}`, admin.url]) {
      const r = await send(`${base}/readyz`)
      assert.deepEqual([r.status, r.body], [503, 'not ready\n'])
      assert.equal((await send(`${base}/livez`)).status, 200)
    }
    health.removeCheck('budget-store')
    assert.equal((await send(`http://127.0.0.1:${running.port}/readyz`)).status, 200)
  })
})
