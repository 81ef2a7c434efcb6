// Runs one provider replica on the demo ledger as its own process:
//   SIGNING_SECRET=… [MCP_SESSION_KEY=…] run-provider.ts --port N (--database-url postgres://… --schema S | --db FILE) [--lease-ms N]
// (the suites' stand-in for `fakemerchant --database-url`, which reads the same options). It prints
// `provider listening on URL` to stderr and stops gracefully on SIGTERM.
import { parseArgs } from 'node:util'
import { startProvider } from '@tollgate/provider'

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'database-url': { type: 'string' },
    schema: { type: 'string' },
    db: { type: 'string' },
    'public-host': { type: 'string' },
    'lease-ms': { type: 'string' },
  },
  strict: true,
})
const secrets = (process.env.SIGNING_SECRET ?? '').split(',').filter((s) => s !== '')
// The 2025-era session ids' MAC key, the same on every replica (from the environment: never on a command line).
const sessionKey = process.env.MCP_SESSION_KEY
const databaseUrl = values['database-url']
const provider = await startProvider({
  secrets,
  port: Number(values.port),
  logger: false,
  store:
    databaseUrl !== undefined
      ? {
          kind: 'postgres',
          connectionString: databaseUrl,
          ...(values.schema !== undefined && { schema: values.schema }),
        }
      : { kind: 'sqlite', file: values.db ?? 'provider.sqlite' },
  ...(values['public-host'] !== undefined && { publicHost: values['public-host'] }),
  ...(values['lease-ms'] !== undefined && { inProgressLeaseMs: Number(values['lease-ms']) }),
  ...(sessionKey !== undefined && { sessionKey }),
  // The demo ledger, asked for by name (sandbox secrets only).
  demoLedger: {},
})
process.stderr.write(`provider listening on ${provider.url}\n`)
// Graceful, as fakemerchant stops on SIGTERM: /readyz 503 at once, serving as usual for 2 s (the balancer's checks
// take the replica out meanwhile), then every request received answered, then exit 0.
const stop = () => {
  void provider.shutdown({ delayMs: 2_000 }).then(() => process.exit(0))
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
