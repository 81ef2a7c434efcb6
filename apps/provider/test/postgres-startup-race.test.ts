// Replicas starting at the same moment on a fresh schema: every store's DDL (keys, demo ledger, 2025-era sessions)
// takes one advisory lock per schema, so concurrent first starts neither fail on CREATE … IF NOT EXISTS races nor
// deadlock (40P01) between differently locked DDL.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { probePostgres } from '@tollgate/test-support'
import pg from 'pg'
import { demoLedgerStore, openPostgresStore } from '../src/index.js'
import { PgSessionStore } from '../src/store/pg-session-store.js'

const { url, skip } = await probePostgres()

test('eight replicas opening every store on one fresh schema at once all start', { skip }, async () => {
  for (let round = 0; round < 3; round++) {
    const schema = `race_${randomUUID().replaceAll('-', '').slice(0, 16)}`
    const opened = await Promise.allSettled(
      Array.from({ length: 8 }, async () => {
        const [store, sessions] = await Promise.all([
          openPostgresStore({ connectionString: url, schema, maxConnections: 2 }),
          PgSessionStore.open({ connectionString: url, schema, maxConnections: 1 }),
        ])
        // The demo ledger's tables are created on first use.
        await demoLedgerStore(store).get('charge', 'ch_none')
        return { store, sessions }
      }),
    )
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    try {
      const failures = opened
        .filter((o) => o.status === 'rejected')
        .map((o) => String((o as PromiseRejectedResult).reason))
      assert.deepEqual(failures, [], `round ${round}`)
    } finally {
      for (const o of opened) {
        if (o.status === 'fulfilled') {
          await o.value.store.close()
          await o.value.sessions.dispose()
        }
      }
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await admin.end()
    }
  }
})
