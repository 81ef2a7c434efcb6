// The kit over REST against the real provider on PostgreSQL: every check passes, the replay byte for byte included
// (a JSONB result column reorders keys, and this kit run failed refund_replay with replay_differs on it).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startProvider } from '@tollgate/provider'
import pg from 'pg'
import { CHECK_IDS } from '../src/index.js'
import { runAgainst, SECRET, verdicts } from './support/kit-harness.js'

const PG_URL = process.env.TOLLGATE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const SCHEMA = `providercheck_rest_${process.pid}_${Date.now().toString(36)}`
let skip: string | undefined

before(async () => {
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 })
  try {
    await c.connect()
    await c.query('SELECT 1')
  } catch (e) {
    skip = `PostgreSQL not reachable at ${new URL(PG_URL).host} (${e instanceof Error ? e.message : 'error'})`
    if (process.env.TOLLGATE_REQUIRE_SERVICES === '1') throw new Error(skip)
  } finally {
    await c.end().catch(() => {})
  }
})

after(async () => {
  if (skip !== undefined) return
  const c = new pg.Client({ connectionString: PG_URL })
  await c.connect()
  try {
    await c.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`)
  } finally {
    await c.end()
  }
})

test('over REST every check passes against the real provider on PostgreSQL, the replay byte-identical', async (t) => {
  if (skip !== undefined) return t.skip(skip)
  const provider = await startProvider({
    secrets: [SECRET],
    store: { kind: 'postgres', connectionString: PG_URL, schema: SCHEMA },
    logger: false,
    demoLedger: {},
  })
  try {
    const run = await runAgainst(provider.baseUrl, 'auto', undefined, 'rest')
    const expected = Object.fromEntries(
      CHECK_IDS.map((id) => [id, id === 'mcp_profile' ? 'skip not_applicable' : 'pass']),
    )
    assert.deepEqual(verdicts(run.results), expected)
    assert.match(run.results.find((r) => r.id === 'refund_replay')?.reason ?? '', /byte-identical body/)
  } finally {
    await provider.close()
  }
})
