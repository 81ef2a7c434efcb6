// PostgreSQL for the provider's tests: the URL, the shared probe (test-support: the reason to skip, or a throw under
// TOLLGATE_REQUIRE_SERVICES=1), unique schema names, and dropping them afterwards.
import { DEFAULT_PG_URL, probePostgres as probe } from '@tollgate/test-support'
import pg from 'pg'

export const PG_URL = process.env.TOLLGATE_PG_URL ?? DEFAULT_PG_URL

/** undefined when PostgreSQL answers; otherwise why the suite skips. Throws when services are required. */
export async function probePostgres(): Promise<string | undefined> {
  return (await probe(PG_URL)).skip
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
