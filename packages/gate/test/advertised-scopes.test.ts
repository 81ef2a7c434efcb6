// Advertising the scopes a client must ask for (RFC 9728 scopes_supported, RFC 6750 challenge scope), and what that
// leaves concealed: the answer is the same for every request and caller, and an ungranted tool stays invisible.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createAudience, createGate, FairBudget, GateConfigError, loopbackAllowList } from '../src/index.ts'
import { CLIENT_PATHS, connect, firstText } from './support/clients.ts'
import { ELSEWHERE, FAKE_TOOLS, ISSUER, RESOURCE, type Running, startGate } from './support/fixture.ts'

const NO_SUCH_TOOL = 'no tool by that name is available to this caller'
const CHALLENGE_WITH_SCOPE =
  'Bearer error="invalid_token", error_description="Authentication required", scope="rates:read", resource_metadata="https://quenchz.invalid/.well-known/oauth-protected-resource/mcp"'

const initialize = (g: Running, headers: Record<string, string>) =>
  fetch(g.url, {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    }),
  })

describe('a gate advertising rates:read', () => {
  let g: Running
  before(async () => {
    g = await startGate({ advertisedScopes: ['rates:read'] })
  })
  after(() => g.close())

  test('the metadata lists it as scopes_supported, and only it', async () => {
    const res = await fetch(`http://127.0.0.1:${g.port}/.well-known/oauth-protected-resource/mcp`)
    assert.deepEqual(await res.json(), {
      resource: RESOURCE,
      authorization_servers: [ISSUER],
      bearer_methods_supported: ['header'],
      scopes_supported: ['rates:read'],
    })
  })

  test('every 401 carries the same challenge with scope="rates:read", whatever the token was or held', async () => {
    const tokens = {
      none: undefined,
      another: await g.issuer.mint({ subject: 'agent-alpha', scopes: ['series:list'], audience: ELSEWHERE }),
      two: await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'], audience: [RESOURCE, ELSEWHERE] }),
      expiredWithBoth: await g.issuer.mint({
        subject: 'agent-alpha',
        scopes: ['rates:read', 'series:list'],
        lifetimeSeconds: -5,
      }),
      expiredWithNone: await g.issuer.mint({ subject: 'agent-beta', scopes: [], lifetimeSeconds: -5 }),
    }
    for (const [name, token] of Object.entries(tokens)) {
      const res = await initialize(g, token === undefined ? {} : { authorization: `Bearer ${token}` })
      assert.equal(res.status, 401, name)
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE_WITH_SCOPE, name)
      await res.text()
    }
  })

  for (const path of CLIENT_PATHS) {
    test(`${path}: the unadvertised scope's tool stays concealed: unlisted, and refused with the no-such-tool bytes`, async () => {
      const token = await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'] })
      const client = await connect(path, g.url, token)
      try {
        const names = (await client.listTools()).tools.map((t) => t.name).sort()
        assert.deepEqual(names, ['calendar.why', 'rates.window'])
        const ungranted = await client.callTool('series.catalogue', {})
        const invented = await client.callTool('series.cataloguz', {})
        assert.equal(ungranted.isError, true)
        assert.equal(invented.isError, true)
        assert.deepEqual(Buffer.from(firstText(ungranted)), Buffer.from(firstText(invented)))
        assert.equal(firstText(ungranted), NO_SUCH_TOOL)
      } finally {
        await client.close()
      }
    })
  }
})

describe('advertised scopes are checked when the gate is built', () => {
  const build = (advertisedScopes: string[]) =>
    createGate({
      serverInfo: { name: 't', version: '0' },
      tools: FAKE_TOOLS,
      audience: createAudience({
        resource: RESOURCE,
        issuer: ISSUER,
        keys: { kind: 'resolver', getKey: async () => Promise.reject(new Error('unused')) },
      }),
      budget: new FairBudget({ capacity: 1, refillPerSecond: 1, callers: ['a'] }),
      allowList: loopbackAllowList(),
      advertisedScopes,
    })

  for (const bad of [['rates read'], ['rates"read'], ['rates\\read'], [''], ['rates:read', 'rates:read']]) {
    test(`refuses ${JSON.stringify(bad)}`, () => {
      assert.throws(() => build(bad), GateConfigError)
    })
  }

  test('accepts several scope-tokens and lists them in order', async () => {
    await build(['rates:read', 'openid']).close()
  })
})
