// The gate over real HTTP on 127.0.0.1 with the official clients: metadata, challenge, host guard, reach, budget.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { Redis } from 'ioredis'
import { FairBudget, manualClock, RedisBudgetStore } from '../src/index.ts'
import { type AnyClient, CLIENT_PATHS, connect, firstText } from './support/clients.ts'
import { ELSEWHERE, RESOURCE, type Running, startGate } from './support/fixture.ts'

type ToolsList = { result: { tools: Array<{ name: string }> } }
const NO_SUCH_TOOL = 'no tool by that name is available to this caller'
const OVER_BUDGET = 'this caller has spent its share of the upstream budget'
const CHALLENGE =
  'Bearer error="invalid_token", error_description="Authentication required", resource_metadata="https://quenchz.invalid/.well-known/oauth-protected-resource/mcp"'

const initializeBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
})

async function rawPost(g: Running, token: string, body: unknown, session?: string): Promise<Response> {
  return fetch(g.url, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
    },
    body: JSON.stringify(body),
  })
}

/** initialize + initialized by hand; returns the session id. */
async function openRawSession(g: Running, token: string): Promise<string> {
  const init = await rawInitialize(g, { authorization: `Bearer ${token}` })
  assert.equal(init.status, 200)
  const session = init.headers.get('mcp-session-id')
  assert.ok(session !== null && /^[\x21-\x7e]+$/.test(session))
  await init.text()
  const done = await rawPost(g, token, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)
  assert.equal(done.status, 202)
  return session
}

async function rawInitialize(g: Running, headers: Record<string, string>): Promise<Response> {
  return fetch(g.url, {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
    body: initializeBody,
  })
}

describe('HTTP surface', () => {
  let g: Running
  before(async () => {
    g = await startGate()
  })
  after(() => g.close())

  test('serves RFC 9728 metadata unauthenticated at the well-known path', async () => {
    const res = await fetch(`http://127.0.0.1:${g.port}/.well-known/oauth-protected-resource/mcp`)
    assert.equal(res.status, 200)
    assert.deepEqual(await res.json(), {
      resource: 'https://quenchz.invalid/mcp',
      authorization_servers: ['https://issuer.quenchz.invalid'],
      bearer_methods_supported: ['header'],
    })
  })

  test('every refusal is the same 401 with a Bearer challenge naming the metadata, and no reason', async () => {
    const tokens = {
      none: undefined,
      another: await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'], audience: ELSEWHERE }),
      two: await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'], audience: [RESOURCE, ELSEWHERE] }),
      noAud: await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'], audience: null }),
      expired: await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'], lifetimeSeconds: -5 }),
      evil: await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'], issuer: 'https://evil.invalid' }),
    }
    for (const [name, token] of Object.entries(tokens)) {
      const res = await rawInitialize(g, token === undefined ? {} : { authorization: `Bearer ${token}` })
      assert.equal(res.status, 401, name)
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE, name)
      assert.equal(await res.text(), '{"error":"invalid_token","error_description":"Authentication required"}', name)
    }
    assert.deepEqual(
      g.events.filter((e) => e.kind === 'refused-token').map((e) => (e as { code: string }).code),
      [
        'ERR_GATE_TOKEN_MISSING',
        'ERR_GATE_AUDIENCE',
        'ERR_GATE_AUDIENCE_LIST',
        'ERR_GATE_CLAIM_MISSING',
        'ERR_GATE_TOKEN_EXPIRED',
        'ERR_GATE_ISSUER',
      ],
    )
  })

  test('a token for this resource gets 200 on initialize, even with no scopes or an unrelated one', async () => {
    for (const scopes of [['rates:read'], [], ['something:else']]) {
      const res = await rawInitialize(g, {
        authorization: `Bearer ${await g.issuer.mint({ subject: 'agent-alpha', scopes })}`,
      })
      assert.equal(res.status, 200, scopes.join(' '))
      assert.match(await res.text(), /"result"/)
    }
  })

  test('a foreign Host gets 421 and a foreign Origin 403, before any token is read', async () => {
    const { request } = await import('node:http')
    const status = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: g.port, path: '/mcp', method: 'POST', headers }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.on('error', reject)
        req.end(initializeBody)
      })
    assert.equal(await status({ host: 'somewhere-else.invalid', 'content-type': 'application/json' }), 421)
    assert.equal(await status({ host: 'somewhere-else.invalid:8931', 'content-type': 'application/json' }), 421)
    assert.equal(
      await status({ host: `127.0.0.1:${g.port}`, origin: 'http://evil.example', 'content-type': 'application/json' }),
      403,
    )
    assert.equal(
      await status({
        host: `localhost:${g.port}`,
        origin: `http://localhost:${g.port}`,
        'content-type': 'application/json',
      }),
      401,
    )
  })

  test('unknown paths are 404 and the metadata path refuses POST', async () => {
    assert.equal((await fetch(`http://127.0.0.1:${g.port}/other`)).status, 404)
    assert.equal(
      (await fetch(`http://127.0.0.1:${g.port}/.well-known/oauth-protected-resource/mcp`, { method: 'POST' })).status,
      405,
    )
  })
})

for (const path of CLIENT_PATHS) {
  describe(`reach and budget through the ${path} client`, () => {
    let g: Running
    const clients: AnyClient[] = []
    const open = async (subject: string, scopes: string[]) => {
      const c = await connect(path, g.url, await g.issuer.mint({ subject, scopes }))
      clients.push(c)
      return c
    }
    before(async () => {
      g = await startGate()
    })
    after(async () => {
      for (const c of clients) await c.close()
      await g.close()
    })

    test(`negotiates the ${path === 'v2-modern' ? 'modern' : 'legacy'} era`, async () => {
      const c = await open('agent-beta', [])
      assert.equal(c.era, path === 'v2-modern' ? 'modern' : 'legacy')
    })

    test('tools/list shows exactly the granted tools, sorted', async () => {
      const table: Array<[string[], string[]]> = [
        [['rates:read'], ['calendar.why', 'rates.window']],
        [
          ['rates:read', 'series:list'],
          ['calendar.why', 'rates.window', 'series.catalogue'],
        ],
        [['series:list'], ['series.catalogue']],
        [[], []],
      ]
      for (const [scopes, names] of table) {
        const c = await open('agent-beta', scopes)
        assert.deepEqual(
          (await c.listTools()).tools.map((t) => t.name),
          names,
          scopes.join(' '),
        )
      }
    })

    test('an ungranted and a nonexistent tool answer byte-identical refusals equal to the constant, echoing nothing', async () => {
      const c = await open('agent-alpha', ['rates:read'])
      const texts: Buffer[] = []
      for (const name of [
        'series.catalogue',
        'series.cataloguz',
        'totally.invented.name',
        'a.name.nobody.chose',
        'rates.window.v2',
      ]) {
        const r = await c.callTool(name, {})
        assert.equal(r.isError, true, name)
        assert.equal(r.content.length, 1)
        const text = firstText(r)
        assert.ok(
          !text.includes(name) && !text.includes('Unknown tool') && !text.includes('scope') && !text.includes('series'),
        )
        texts.push(Buffer.from(text, 'utf8'))
      }
      for (const t of texts) assert.ok(t.equals(Buffer.from(NO_SUCH_TOOL, 'utf8')))
      assert.equal(texts[0]?.length, 48)
    })

    test('a granted call is served with structuredContent and an identical text copy', async () => {
      const c = await open('agent-alpha', ['rates:read'])
      const r = await c.callTool('calendar.why', { day: '2026-04-03' })
      assert.notEqual(r.isError, true)
      assert.deepEqual(r.structuredContent, { echoed: '2026-04-03', source: 'test.' })
      assert.deepEqual(JSON.parse(firstText(r)), r.structuredContent)
    })

    test('bad arguments, a throwing tool and a bad output are isError results that leak nothing', async () => {
      const c = await open('agent-beta', ['rates:read'])
      const missing = await c.callTool('calendar.why', {})
      assert.equal(missing.isError, true)
      assert.equal(firstText(missing), "invalid arguments: the arguments must have required property 'day'")
      const thrown = await c.callTool('calendar.why', { day: 'throw' })
      assert.equal(thrown.isError, true)
      assert.ok(!firstText(thrown).includes('internal detail'))
      const bad = await c.callTool('calendar.why', { day: 'bad-output' })
      assert.equal(bad.isError, true)
      assert.equal(firstText(bad), firstText(thrown))
      assert.equal(firstText(await c.callTool('calendar.why', { day: 'refuse' })), 'the tool refused this day')
      assert.deepEqual(
        g.events.filter((e) => e.kind === 'fault').map((e) => (e as { code: string }).code),
        ['tool-threw', 'output-schema'],
      )
    })
  })
}

describe('the budget is charged first on every tools/call (v2 modern and v1 clients)', () => {
  const countUntilRefused = async (
    c: AnyClient,
    name: string,
    args: Record<string, unknown>,
    expectRefusalText: string | undefined,
  ) => {
    let served = 0
    for (let i = 0; i < 500; i++) {
      const r = await c.callTool(name, args)
      const text = firstText(r)
      if (text === OVER_BUDGET) return served
      if (expectRefusalText !== undefined) assert.equal(text, expectRefusalText)
      served++
    }
    throw new Error('500 calls were free')
  }

  test('served, ungranted and nonexistent calls each last exactly 45 on a fresh budget: refusals cost the same', async () => {
    const counts: number[] = []
    for (const [name, args, text] of [
      ['calendar.why', { day: '2026-04-03' }, undefined],
      ['series.catalogue', {}, NO_SUCH_TOOL],
      ['series.cataloguz', {}, NO_SUCH_TOOL],
    ] as const) {
      const g = await startGate()
      try {
        const c = await connect(
          'v2-modern',
          g.url,
          await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'] }),
        )
        counts.push(await countUntilRefused(c, name, { ...args }, text))
        await c.close()
      } finally {
        await g.close()
      }
    }
    assert.deepEqual(counts, [45, 45, 45])
  })

  test('once spent, every name answers the over-budget text; listing is free; the quiet caller keeps its 15', async () => {
    const g = await startGate()
    try {
      const greedy = await connect('v1', g.url, await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'] }))
      for (let i = 0; i < 5; i++) await greedy.listTools()
      assert.equal(await countUntilRefused(greedy, 'calendar.why', { day: 'x' }, undefined), 45)
      for (const name of ['calendar.why', 'series.catalogue', 'no.such']) {
        const r = await greedy.callTool(name, {})
        assert.equal(r.isError, true)
        assert.equal(firstText(r), OVER_BUDGET)
      }
      const quiet = await connect(
        'v2-modern',
        g.url,
        await g.issuer.mint({ subject: 'agent-beta', scopes: ['rates:read'] }),
      )
      assert.equal(await countUntilRefused(quiet, 'calendar.why', { day: 'x' }, undefined), 15)
      await greedy.close()
      await quiet.close()
    } finally {
      await g.close()
    }
  })

  test('an authenticated caller with no reserve is over budget on its very first call', async () => {
    const g = await startGate()
    try {
      const c = await connect(
        'v2-legacy',
        g.url,
        await g.issuer.mint({ subject: 'agent-gamma', scopes: ['rates:read'] }),
      )
      assert.deepEqual(
        (await c.listTools()).tools.map((t) => t.name),
        ['calendar.why', 'rates.window'],
      )
      assert.equal(firstText(await c.callTool('calendar.why', { day: 'x' })), OVER_BUDGET)
      await c.close()
    } finally {
      await g.close()
    }
  })

  test('a tools/call whose name is not a string is charged and refused like an unknown name', async () => {
    const g = await startGate()
    try {
      const token = await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'] })
      const session = await openRawSession(g, token)
      const res = await rawPost(
        g,
        token,
        { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 42, arguments: {} } },
        session,
      )
      assert.equal(res.status, 200)
      assert.deepEqual(((await res.json()) as { result: unknown }).result, {
        content: [{ type: 'text', text: NO_SUCH_TOOL }],
        isError: true,
      })
      const c = await connect('v2-modern', g.url, token)
      assert.equal(await countUntilRefused(c, 'calendar.why', { day: 'x' }, undefined), 44)
      await c.close()
    } finally {
      await g.close()
    }
  })
})

describe('2025-era sessions', () => {
  let g: Running
  before(async () => {
    g = await startGate()
  })
  after(() => g.close())

  test('initialize answers JSON with an Mcp-Session-Id; requests without one are 400', async () => {
    const token = await g.issuer.mint({ subject: 'agent-beta', scopes: ['rates:read'] })
    const init = await rawInitialize(g, { authorization: `Bearer ${token}` })
    assert.equal(init.headers.get('content-type'), 'application/json')
    assert.ok(init.headers.get('mcp-session-id'))
    const body = (await init.json()) as { result: { serverInfo: { name: string } } }
    assert.equal(body.result.serverInfo.name, 'gate-test')
    const orphan = await rawPost(g, token, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} })
    assert.equal(orphan.status, 400)
  })

  test('a session is bound to its caller: another caller with a valid token is told it does not exist', async () => {
    const alpha = await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'] })
    const beta = await g.issuer.mint({ subject: 'agent-beta', scopes: ['rates:read'] })
    const session = await openRawSession(g, alpha)
    const own = await rawPost(g, alpha, { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }, session)
    assert.equal(own.status, 200)
    assert.deepEqual(
      ((await own.json()) as ToolsList).result.tools.map((t: { name: string }) => t.name),
      ['calendar.why', 'rates.window'],
    )
    const foreign = await rawPost(g, beta, { jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} }, session)
    const unknown = await rawPost(
      g,
      beta,
      { jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} },
      'no-such-session',
    )
    assert.equal(foreign.status, 404)
    assert.equal(unknown.status, 404)
    assert.equal(await foreign.text(), await unknown.text())
  })

  test("scopes are read from each request's token, not from the one that opened the session", async () => {
    const narrow = await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'] })
    const wide = await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read', 'series:list'] })
    const session = await openRawSession(g, narrow)
    const listed = await rawPost(g, wide, { jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} }, session)
    assert.deepEqual(
      ((await listed.json()) as ToolsList).result.tools.map((t: { name: string }) => t.name),
      ['calendar.why', 'rates.window', 'series.catalogue'],
    )
  })

  test('DELETE ends a session; the id is then unknown', async () => {
    const token = await g.issuer.mint({ subject: 'agent-beta', scopes: [] })
    const session = await openRawSession(g, token)
    const del = await fetch(g.url, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    })
    assert.equal(del.status, 200)
    const after = await rawPost(g, token, { jsonrpc: '2.0', id: 6, method: 'tools/list', params: {} }, session)
    assert.equal(after.status, 404)
  })

  test('a body over the limit is 413 before the SDK sees it', async () => {
    const token = await g.issuer.mint({ subject: 'agent-beta', scopes: [] })
    const res = await fetch(g.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${token}`,
      },
      body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"${'x'.repeat(1_100_000)}"}}`,
    })
    assert.equal(res.status, 413)
  })

  test("one caller opening too many sessions loses its own oldest, not anyone else's", async () => {
    const small = await startGate({ maxSessionsPerCaller: 2, maxSessions: 3 })
    try {
      const alpha = await small.issuer.mint({ subject: 'agent-alpha', scopes: [] })
      const beta = await small.issuer.mint({ subject: 'agent-beta', scopes: [] })
      const list = (token: string, s: string) =>
        rawPost(small, token, { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }, s)
      const b1 = await openRawSession(small, beta)
      const a1 = await openRawSession(small, alpha)
      const a2 = await openRawSession(small, alpha)
      const a3 = await openRawSession(small, alpha)
      assert.equal((await list(alpha, a1)).status, 404)
      assert.equal((await list(alpha, a2)).status, 200)
      assert.equal((await list(alpha, a3)).status, 200)
      assert.equal((await list(beta, b1)).status, 200)
      const refused = await rawInitialize(small, {
        authorization: `Bearer ${await small.issuer.mint({ subject: 'agent-gamma', scopes: [] })}`,
      })
      assert.equal(refused.status, 503)
    } finally {
      await small.close()
    }
  })
})

describe('a budget store that cannot be reached', () => {
  // A real RedisBudgetStore pointed at a port nothing listens on, failing fast instead of queueing.
  let g: Running
  let redis: Redis
  before(async () => {
    const dead = createServer()
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r))
    const port = (dead.address() as AddressInfo).port
    await new Promise<void>((r) => dead.close(() => r()))
    redis = new Redis({
      host: '127.0.0.1',
      port,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    })
    redis.on('error', () => {})
    const budget = new FairBudget({
      capacity: 60,
      refillPerSecond: 60,
      callers: ['agent-alpha'],
      clock: manualClock().now,
      store: new RedisBudgetStore(redis),
    })
    g = await startGate({ budget })
  })
  after(async () => {
    await g.close()
    redis.disconnect()
  })

  test('fails closed: the call is not served, the caller sees no detail, and the fault is reported', async () => {
    const token = await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'], audience: RESOURCE })
    const client = await connect('v2-modern', g.url, token)
    try {
      await assert.rejects(client.callTool('calendar.why', { day: '2026-04-03' }), (error: Error) => {
        assert.match(error.message, /the budget store could not be reached/)
        assert.doesNotMatch(error.message, /127\.0\.0\.1|ECONNREFUSED|2026-04-03|calendar/)
        return true
      })
    } finally {
      await client.close()
    }
    const faults = g.events.filter((e) => e.kind === 'fault')
    assert.deepEqual(
      faults.map((e) => (e as { code: string }).code),
      ['budget-store'],
    )
    assert.equal((faults[0] as { error?: { code?: string } }).error?.code, 'ERR_GATE_BUDGET_STORE')
  })
})
