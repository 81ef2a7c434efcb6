// quenchz over real HTTP with the real rates core (history source) and all three official client paths.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createAudience, createInProcessIssuer, type InProcessIssuer } from '@tollgate/gate'
import { createRatesTools, openSource, type RatesSource } from '../../src/rates/index.ts'
import { type RunningQuenchz, startQuenchz } from '../../src/server/start-quenchz.ts'
import { type AnyClient, CLIENT_PATHS, connect, firstText } from './support/clients.ts'
import { HISTORY_ZIP, NO_HISTORY } from './support/shared.ts'

const ISSUER = 'https://issuer.quenchz.invalid'
const RESOURCE = 'https://quenchz.invalid/mcp'
const NO_SUCH_TOOL = 'no tool by that name is available to this caller'

describe('quenchz serves the rates core to every client era', { skip: NO_HISTORY }, () => {
  let source: RatesSource
  let issuer: InProcessIssuer
  let server: RunningQuenchz
  const clients: AnyClient[] = []
  const open = async (path: (typeof CLIENT_PATHS)[number], subject: string, scopes: string[]) => {
    const c = await connect(path, server.url, await issuer.mint({ subject, scopes }))
    clients.push(c)
    return c
  }

  before(async () => {
    source = await openSource({ kind: 'history', file: HISTORY_ZIP })
    issuer = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
    server = await startQuenchz({
      tools: createRatesTools({ source, now: () => new Date('2026-08-26T12:00:00Z') }),
      audience: createAudience({ resource: RESOURCE, issuer: ISSUER, keys: issuer.keySource(), algorithms: ['RS256'] }),
      port: 0,
    })
  })
  after(async () => {
    for (const c of clients) await c.close()
    await server?.close()
    await source?.close()
  })

  for (const path of CLIENT_PATHS) {
    describe(`through ${path}`, () => {
      test('identifies as quenchz 0.1.0 with the digest instructions', async () => {
        const c = await open(path, 'agent-beta', ['rates:read'])
        assert.equal(c.era, path === 'v2-modern' ? 'modern' : 'legacy')
        assert.deepEqual({ name: c.server?.name, version: c.server?.version }, { name: 'quenchz', version: '0.1.0' })
        assert.equal(
          c.instructions,
          'Euro foreign exchange reference rates from the ECB Data Portal. Every answer carries a coverage certificate saying what it did not deliver and why. Source: ECB statistics.',
        )
      })

      test('lists tools by scope, each with an outputSchema', async () => {
        const reader = await open(path, 'agent-beta', ['rates:read'])
        const listed = (await reader.listTools()).tools
        assert.deepEqual(
          listed.map((t) => t.name),
          ['calendar.why', 'rates.convert', 'rates.window'],
        )
        for (const t of listed) assert.equal(typeof t.outputSchema, 'object', t.name)
        const lister = await open(path, 'agent-beta', ['series:list'])
        assert.deepEqual(
          (await lister.listTools()).tools.map((t) => t.name),
          ['series.catalogue'],
        )
      })

      test('rates.window answers the Easter 2026 window: 8 observations, 4 closures, structuredContent equal to its text', async () => {
        const c = await open(path, 'agent-alpha', ['rates:read'])
        const r = await c.callTool('rates.window', { currency: 'USD', start: '2026-03-30', end: '2026-04-10' })
        assert.notEqual(r.isError, true, firstText(r))
        const out = r.structuredContent as {
          observations: Array<[string, number]>
          coverage: Record<string, unknown>
          source: string
        }
        assert.deepEqual(out.observations, [
          ['2026-03-30', 1.1484],
          ['2026-03-31', 1.1498],
          ['2026-04-01', 1.1605],
          ['2026-04-02', 1.1525],
          ['2026-04-07', 1.1557],
          ['2026-04-08', 1.1706],
          ['2026-04-09', 1.1685],
          ['2026-04-10', 1.1711],
        ])
        assert.equal(out.coverage.requested_calendar_days, 12)
        assert.equal(out.coverage.expected_observations, 8)
        assert.deepEqual(out.coverage.absent, {
          target_closed: 4,
          not_yet_published: 0,
          no_such_observation: 0,
          before_the_series: 0,
        })
        assert.equal(out.source, 'ECB statistics.')
        assert.deepEqual(JSON.parse(firstText(r)), r.structuredContent)
      })

      test('calendar.why says good-friday for 2026-04-03, and a bad day is refused with the digest text', async () => {
        const c = await open(path, 'agent-alpha', ['rates:read'])
        const r = await c.callTool('calendar.why', { day: '2026-04-03' })
        assert.deepEqual(r.structuredContent, {
          date: '2026-04-03',
          closed_because: 'good-friday',
          source: 'ECB statistics.',
        })
        const bad = await c.callTool('calendar.why', { day: '2026-13-45' })
        assert.equal(bad.isError, true)
        assert.equal(firstText(bad), "day must be a date as YYYY-MM-DD; got '2026-13-45'")
      })

      test('series.catalogue is concealed from a rates:read caller with the same bytes as a name nobody chose', async () => {
        const c = await open(path, 'agent-beta', ['rates:read'])
        const ungranted = await c.callTool('series.catalogue', {})
        const invented = await c.callTool('series.cataloguz', {})
        assert.equal(ungranted.isError, true)
        assert.equal(invented.isError, true)
        assert.ok(Buffer.from(firstText(ungranted)).equals(Buffer.from(firstText(invented))))
        assert.equal(firstText(ungranted), NO_SUCH_TOOL)
      })
    })
  }
})
