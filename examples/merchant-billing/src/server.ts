// node dist/src/server.js — Acme's provider on PORT (default 8080). Reads SIGNING_SECRET, and DATABASE_URL for
// PostgreSQL (else SQLite files in ACME_DATA_DIR, default the current folder); ACME_SEED_DEMO=1 adds demo rows.
import { startAcmeProvider } from './start.js'

const secret = process.env.SIGNING_SECRET
if (secret === undefined || secret === '') {
  console.error('acme-provider: set SIGNING_SECRET to the signing secret the platform gave you')
  process.exit(2)
}
const acme = await startAcmeProvider({
  secret,
  port: Number(process.env.PORT ?? 8080),
  ...(process.env.DATABASE_URL !== undefined && { databaseUrl: process.env.DATABASE_URL }),
  ...(process.env.ACME_DATA_DIR !== undefined && { dataDir: process.env.ACME_DATA_DIR }),
  seedDemo: process.env.ACME_SEED_DEMO === '1',
})
console.log(`acme-provider: MCP at ${acme.provider.url}, REST at ${acme.provider.restUrl}`)
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void acme.close().then(() => process.exit(0))
  })
}
