// PostgreSQL for tests: the URL, a probe that gives the reason to skip (or throws under TOLLGATE_REQUIRE_SERVICES=1),
// unique schema names, and dropping them afterwards.
import pg from 'pg'

export const PG_URL = process.env.TOLLGATE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** undefined when PostgreSQL answers; otherwise why the suite skips. Throws when services are required. */
export async function probePostgres(): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 })
  let reason: string | undefined
  try {
    await c.connect()
    await c.query('SELECT 1')
  } catch (e) {
    reason = `PostgreSQL not reachable at 127.0.0.1:5432 (${e instanceof Error ? e.message : 'error'})`
  } finally {
    await c.end().catch(() => {})
  }
  if (reason !== undefined && process.env.TOLLGATE_REQUIRE_SERVICES === '1') throw new Error(reason)
  return reason
}

let n = 0
/** A schema name no other test run uses. */
export const uniqueSchema = (label: string) =>
  `tollgate_${label}_${process.pid}_${Date.now().toString(36)}_${++n}`.toLowerCase()

export async function dropSchemas(...schemas: string[]): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL })
  await c.connect()
  try {
    for (const s of schemas) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`)
  } finally {
    await c.end()
  }
}
