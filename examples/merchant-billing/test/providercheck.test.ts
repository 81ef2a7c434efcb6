// providercheck (the platform's conformance kit) against Acme's provider, over MCP (both eras) and REST.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { runProvidercheck } from '@tollgate/providercheck'
import { startAcmeProvider } from '../src/start.js'

const SECRET = `srmps_${randomUUID().replaceAll('-', '')}`
const FIXTURES = { tenant: randomUUID(), customer: 'ACC-1001', transaction: 'PAY-77001', subscription: 'PLN-5001' }

const runs = [
  { transport: 'mcp', era: 'auto', store: 'sqlite' },
  { transport: 'mcp', era: 'legacy', store: 'sqlite' },
  { transport: 'rest', era: 'auto', store: 'sqlite' },
  { transport: 'mcp', era: 'auto', store: 'postgres' },
  { transport: 'rest', era: 'auto', store: 'postgres' },
] as const

for (const run of runs) {
  const databaseUrl = process.env.DATABASE_URL
  const skip = run.store === 'postgres' && databaseUrl === undefined ? 'set DATABASE_URL to run it' : false
  test(`providercheck passes over ${run.transport} (era ${run.era}) on ${run.store}`, { skip }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acme-provider-'))
    const schema = `acme_check_${randomUUID().slice(0, 8)}`
    // Fresh demo rows for every run: the kit refunds part of PAY-77001 and cancels PLN-5001.
    const acme = await startAcmeProvider({
      secrets: [SECRET],
      dataDir: dir,
      seedDemo: true,
      logger: false,
      schema,
      ...(run.store === 'postgres' && databaseUrl !== undefined && { databaseUrl }),
    })
    try {
      const report = await runProvidercheck({
        transport: run.transport,
        era: run.era,
        baseUrl: run.transport === 'mcp' ? acme.provider.url : acme.provider.baseUrl,
        secret: SECRET,
        allowPrivate: true,
        fixtures: FIXTURES,
      })
      const failed = report.checks.filter((c) => c.verdict !== 'pass' && c.code !== 'not_applicable')
      assert.deepEqual(failed, [])
      assert.equal(report.outcome, 'pass')
    } finally {
      if (run.store === 'postgres') {
        await acme.sql.run(`DROP SCHEMA ${schema} CASCADE`)
        await acme.sql.run(`DROP SCHEMA ${schema}_keys CASCADE`)
      }
      await acme.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
}
