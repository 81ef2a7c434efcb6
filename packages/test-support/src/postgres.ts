// Finds PostgreSQL at 127.0.0.1:5432 (user postgres, db test; $TOLLGATE_PG_URL overrides); the suite skips with the
// reason when it is absent, unless TOLLGATE_REQUIRE_SERVICES=1.
import pg from 'pg'

export interface PostgresProbe {
  /** The connection string the suite should use. */
  url: string
  /** Why the PostgreSQL suite is skipped; undefined when it runs. */
  skip: string | undefined
}

export const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/test'

/** Connects once and runs `SELECT 1`; throws instead of skipping when TOLLGATE_REQUIRE_SERVICES=1. */
export async function probePostgres(
  url: string = process.env.TOLLGATE_PG_URL ?? DEFAULT_PG_URL,
): Promise<PostgresProbe> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return { url, skip: undefined }
  } catch (error) {
    // The URL may carry a password: the reason names the default address only.
    const reason = `PostgreSQL not reachable (${url === DEFAULT_PG_URL ? '127.0.0.1:5432' : '$TOLLGATE_PG_URL'}: ${
      error instanceof Error ? error.message : 'error'
    })`
    if (process.env.TOLLGATE_REQUIRE_SERVICES === '1') throw new Error(`${reason}, and TOLLGATE_REQUIRE_SERVICES=1`)
    return { url, skip: reason }
  } finally {
    await client.end().catch(() => {})
  }
}
