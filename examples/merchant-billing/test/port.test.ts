// Acme's BillingPort against the provider's testing kit: exactly-once where the merchant writes code.
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testBillingPort } from '@tollgate/provider/testing'
import { AcmeBillingPort } from '../src/acme-billing-port.js'
import { createBillingTables, openPlan, seedBillingDemo } from '../src/billing-db.js'
import { openPostgres, openSqlite, type Sql } from '../src/sql.js'

async function subjectOn(sql: Sql) {
  await createBillingTables(sql)
  await seedBillingDemo(sql)
  let plans = 0
  return {
    port: new AcmeBillingPort(sql),
    // PAY-77002 has $5,000.00 to refund: every check refunds 1 cent of it.
    refundableTransaction: 'PAY-77002',
    activeSubscription: () => openPlan(sql, `PLN-T${++plans}`),
  }
}

const dir = mkdtempSync(join(tmpdir(), 'acme-port-'))
const sqlite = openSqlite(join(dir, 'billing.sqlite'))
testBillingPort('Acme billing on SQLite', () => subjectOn(sqlite), {
  after: async () => {
    await sqlite.close()
    rmSync(dir, { recursive: true, force: true })
  },
})

const databaseUrl = process.env.DATABASE_URL
if (databaseUrl !== undefined) {
  const schema = `acme_test_${randomUUID().slice(0, 8)}`
  const pg = openPostgres(databaseUrl, schema)
  testBillingPort(
    'Acme billing on PostgreSQL',
    async () => {
      await pg.run(`CREATE SCHEMA ${schema}`)
      return subjectOn(pg)
    },
    {
      after: async () => {
        await pg.run(`DROP SCHEMA ${schema} CASCADE`)
        await pg.close()
      },
    },
  )
}
