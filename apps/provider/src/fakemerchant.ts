// fakemerchant: the provider on the demo ledger, for trying the platform end to end on one machine.
//   SIGNING_SECRET=srmps_<random> npx fakemerchant [--port 12112] [--host 127.0.0.1] [--db FILE]
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startProvider } from './provider.js'
import type { SqliteDurability } from './store/sqlite-store.js'

const USAGE = `usage: SIGNING_SECRET=srmps_<random> fakemerchant [--port 12112] [--host 127.0.0.1] [--db FILE]
  [--lease-ms 30000] [--settle-ms 10000] [--retention-days 30] [--public-host HOST] [--strip-prefix /PREFIX]
  [--durability power-loss|process-crash]
  SIGNING_SECRET  the sandbox signing secret (srmps_…); two comma-separated secrets while rotating
  --db FILE       SQLite file to keep data in across restarts; default: a fresh file in the OS temp dir (fresh data)`

const HANG_HOOK = 'TOLLGATE_PROVIDER_TEST_HANG_AFTER_REFUND'

function int(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined
  if (!/^[0-9]+$/.test(value)) throw new RangeError(`${name} must be a whole number`)
  return Number(value)
}

async function main(): Promise<number> {
  let values: Record<string, string | boolean | undefined>
  try {
    ;({ values } = parseArgs({
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        db: { type: 'string' },
        'lease-ms': { type: 'string' },
        'settle-ms': { type: 'string' },
        'retention-days': { type: 'string' },
        'public-host': { type: 'string' },
        'strip-prefix': { type: 'string' },
        durability: { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    }))
  } catch {
    process.stderr.write(`${USAGE}\n`)
    return 2
  }
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  const secrets = (process.env.SIGNING_SECRET ?? '').split(',').filter((s) => s !== '')
  if (secrets.length === 0) {
    process.stderr.write(
      'fakemerchant: no signing secret. Set one, e.g.\n  SIGNING_SECRET=srmps_$(openssl rand -hex 16) npx fakemerchant\n' +
        '(the platform signs every request with it; use the same value on the calling side)\n',
    )
    return 2
  }
  const str = (k: string) => values[k] as string | undefined
  const db = str('db') ?? join(mkdtempSync(join(tmpdir(), 'fakemerchant-')), 'fakemerchant.sqlite')
  const hangOn = process.env[HANG_HOOK]
  try {
    const leaseMs = int(str('lease-ms'), '--lease-ms')
    const settleAfterMs = int(str('settle-ms'), '--settle-ms')
    const retentionDays = int(str('retention-days'), '--retention-days')
    const provider = await startProvider({
      secrets,
      host: str('host') ?? '127.0.0.1',
      port: int(str('port'), '--port') ?? 12112,
      store: {
        kind: 'sqlite',
        file: db,
        ...(str('durability') !== undefined && { durability: str('durability') as SqliteDurability }),
      },
      ...(str('public-host') !== undefined && { publicHost: str('public-host') }),
      ...(str('strip-prefix') !== undefined && { stripPrefix: str('strip-prefix') }),
      ...(leaseMs !== undefined && { inProgressLeaseMs: leaseMs }),
      // Replicas of one deployment share this key so a 2025-era session opened on one continues on another.
      ...(process.env.MCP_SESSION_KEY !== undefined && { sessionKey: process.env.MCP_SESSION_KEY }),
      ...(retentionDays !== undefined && { retentionDays }),
      demoLedger: {
        ...(settleAfterMs !== undefined && { settleAfterMs }),
        // TEST ONLY (off unless the env var is set): hang after a refund of this charge is committed to the ledger
        // and before its outcome is recorded, so a test can SIGKILL the process at the worst moment.
        ...(hangOn !== undefined &&
          hangOn !== '' && {
            afterRefundCommitted: async (ref: string) => {
              if (ref !== hangOn) return
              process.stderr.write('TEST-HOOK hanging after refund commit\n')
              await new Promise(() => {})
            },
          }),
      },
    })
    process.stdout.write(`fakemerchant: serving ${provider.url} (data: ${db})\n`)
    const stop = () => {
      void provider.close().then(() => process.exit(0))
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    return -1
  } catch (error) {
    const message = error instanceof Error ? error.message : 'unknown error'
    process.stderr.write(`fakemerchant: ${message}\n`)
    return 1
  }
}

const code = await main()
if (code >= 0) process.exitCode = code
