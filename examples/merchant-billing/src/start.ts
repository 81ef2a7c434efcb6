// Acme's provider: merchant-provider/v1 over MCP and REST in front of Acme's billing database.
import { type ProviderOptions, type RunningProvider, type StoreOptions, startProvider } from '@tollgate/provider'
import { AcmeBillingPort } from './acme-billing-port.js'
import { createBillingTables, seedBillingDemo } from './billing-db.js'
import { openPostgres, openSqlite, type Sql } from './sql.js'

export interface AcmeProviderOptions {
  /** The signing secret the platform gave you (srmps_… in the sandbox, srmp_… in production); two while rotating. */
  secrets: readonly string[]
  /** PostgreSQL for both the billing tables and the provider's keys; without it, two SQLite files in dataDir. */
  databaseUrl?: string
  /** Folder of the SQLite files (default: the current folder). */
  dataDir?: string
  /** PostgreSQL schema of the billing tables; the provider's keys go to `<schema>_keys`. Default 'acme'. */
  schema?: string
  /** Insert the demo rows (ACC-1001, PAY-77001, PLN-5001, …) into empty billing tables. */
  seedDemo?: boolean
  port?: number
  host?: string
  /** false: no logs (tests). Default: the provider's JSON log lines on stderr. */
  logger?: false
  /** Everything else startProvider takes: publicHost, stripPrefix, tls, adminPort, sessionKey, shutdown timings … */
  serve?: Omit<ProviderOptions, 'secrets' | 'billing' | 'demoLedger' | 'store' | 'port' | 'host' | 'logger'>
}

export interface AcmeProvider {
  provider: RunningProvider
  sql: Sql
  /** Graceful stop (SIGTERM): the provider's shutdown() — every request received is answered — then the database. */
  shutdown(options?: { deadlineMs?: number; delayMs?: number }): ReturnType<RunningProvider['shutdown']>
  /** Immediate stop (tests): open connections are cut. */
  close(): Promise<void>
}

export async function startAcmeProvider(options: AcmeProviderOptions): Promise<AcmeProvider> {
  const dir = options.dataDir ?? '.'
  const schema = options.schema ?? 'acme'
  const sql =
    options.databaseUrl === undefined
      ? openSqlite(`${dir}/acme-billing.sqlite`)
      : openPostgres(options.databaseUrl, schema)
  try {
    if (sql.dialect === 'postgres') await sql.run(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
    await createBillingTables(sql)
    if (options.seedDemo === true && (await sql.one('SELECT id FROM accounts LIMIT 1')) === undefined) {
      await seedBillingDemo(sql)
    }
    const store: StoreOptions =
      options.databaseUrl === undefined
        ? { kind: 'sqlite', file: `${dir}/acme-provider-keys.sqlite` }
        : { kind: 'postgres', connectionString: options.databaseUrl, schema: `${schema}_keys` }
    const provider = await startProvider({
      ...options.serve,
      secrets: options.secrets,
      billing: new AcmeBillingPort(sql),
      store,
      ...(options.port !== undefined && { port: options.port }),
      ...(options.host !== undefined && { host: options.host }),
      ...(options.logger === false && { logger: false }),
    })
    return {
      provider,
      sql,
      async shutdown(how) {
        const report = await provider.shutdown(how)
        await sql.close()
        return report
      },
      async close() {
        await provider.close()
        await sql.close()
      },
    }
  } catch (error) {
    await sql.close()
    throw error
  }
}
