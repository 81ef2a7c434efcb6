// Scopes as common authorization servers issue them: a `scope` string (RFC 9068, Keycloak, Auth0), an `scp` array
// (Okta) or an `scp` string (Microsoft Entra ID). quenchz serves --jwks-url as its own process; the official v2 client
// lists the tools each token shows. With both claims, `scope` alone counts.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import { type CliProcess, startCliProcess } from './support/cli-process.ts'
import { connect } from './support/clients.ts'
import { type JwksServer, startJwksServer, TEST_ISSUER } from './support/jwks-server.ts'
import { scratchWithEmptyRecordings } from './support/scratch.ts'

const RESOURCE = 'https://quenchz.invalid/mcp'
const RATES = ['calendar.why', 'rates.convert', 'rates.window']
const ALL = [...RATES, 'series.catalogue'].sort()
const { scratch, empty } = scratchWithEmptyRecordings('quenchz-scopes-')
after(() => rmSync(scratch, { recursive: true, force: true }))

describe('tools shown by the scope claim a token carries', () => {
  let jwks: JwksServer
  let quenchz: CliProcess
  before(async () => {
    jwks = await startJwksServer()
    quenchz = await startCliProcess(
      [
        ...['--port', '0', '--jwks-url', jwks.url, '--issuer', TEST_ISSUER],
        ...['--source', 'recordings', '--recordings', empty],
      ],
      scratch,
    )
  })
  after(async () => {
    await quenchz?.stop()
    await jwks?.close()
  })

  const toolsFor = async (claims: Record<string, unknown>): Promise<string[]> => {
    const client = await connect('v2-modern', quenchz.url, await jwks.signClaims('user-1', RESOURCE, claims))
    try {
      return (await client.listTools()).tools.map((t) => t.name).sort()
    } finally {
      await client.close()
    }
  }

  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ['a scope string (Keycloak, Auth0)', { scope: 'openid rates:read' }, RATES],
    ['an scp array (Okta)', { scp: ['rates:read', 'series:list'] }, ALL],
    ['an scp string (Entra ID)', { scp: 'rates:read' }, RATES],
    ['both: scope counts, scp is not added to it', { scope: 'rates:read', scp: ['rates:read', 'series:list'] }, RATES],
    ['both, scope empty: nothing, whatever scp says', { scope: '', scp: ['rates:read'] }, []],
    ['neither', {}, []],
  ]
  for (const [name, claims, expected] of cases) {
    test(`${name}: ${expected.length === 0 ? 'no tool' : expected.join(', ')}`, async () => {
      assert.deepEqual(await toolsFor(claims), expected)
    })
  }

  test('an Okta-style token calls a tool it was shown', async () => {
    const client = await connect(
      'v2-modern',
      quenchz.url,
      await jwks.signClaims('user-2', RESOURCE, { scp: ['rates:read'] }),
    )
    try {
      const result = await client.callTool('calendar.why', { day: '2026-04-03' })
      assert.equal(result.isError ?? false, false, JSON.stringify(result.content))
    } finally {
      await client.close()
    }
  })
})
