// fakemerchant: the provider on the demo ledger, for trying the platform end to end on one machine. It serves both
// bindings on one port: MCP at /mcp and REST at /v1/… (the REST base URL is the bare origin).
//   SIGNING_SECRET=srmps_<random> npx fakemerchant [--port 12112] [--host 127.0.0.1] [--db FILE | --database-url URL]
// SIGHUP re-reads the TLS files and the secrets file (no restart, no connection dropped).
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import {
  exitQuietlyOnBrokenPipe,
  listenProblem,
  type OwnedTempDir,
  ownedTempDir,
  parseArgsProblem,
  parsePort,
  USAGE_EXIT,
  usageError,
  versionLine,
} from '@tollgate/cli'
import { readTlsFiles, type TlsCredentials, TlsCredentialsError } from '@tollgate/mcp-endpoint'
import { secretEnvironment } from '@tollgate/signing'
import { dbPathProblem } from './db-path.js'
import { SecretsError } from './errors.js'
import { chooseStore, DEFAULT_DATABASE_SCHEMA, explainStoreFailure } from './fakemerchant-store.js'
import { SERVER_INFO } from './mcp/create-server.js'
import { type RunningProvider, startProvider } from './provider.js'
import { readSecretsFile } from './secrets.js'

const BIN = 'fakemerchant'
const USAGE = `usage: SIGNING_SECRET=srmps_<random> fakemerchant [--port 12112] [--host 127.0.0.1] [--db FILE]
  [--lease-ms 30000] [--settle-ms 10000] [--retention-days 30] [--public-host HOST] [--strip-prefix /PREFIX]
  [--durability power-loss|process-crash] [--database-url postgres://… [--database-schema ${DEFAULT_DATABASE_SCHEMA}]]
  [--allowed-host NAME]… [--admin-port N [--admin-host 127.0.0.1]] [--shutdown-delay-ms 1000]
  [--shutdown-timeout-ms 10000] [--tls-cert FILE --tls-key FILE] [--signing-secret-file FILE]
  fakemerchant -h|--help | --version
  Serves MCP at http://HOST:PORT/mcp and REST at http://HOST:PORT/v1/… (REST base URL http://HOST:PORT), and
  GET /livez (the process serves) and /readyz (the store takes writes; 503 while not, or while stopping) unsigned.
  SIGNING_SECRET  the sandbox signing secret (srmps_…); two comma-separated secrets while rotating
  --signing-secret-file FILE  read the secret(s) from FILE instead: one or two (old, then new), one a line;
                  re-read on SIGHUP (a file that switches sandbox/production or holds a malformed line is refused,
                  the old secrets kept)
  --tls-cert FILE --tls-key FILE  serve HTTPS with this certificate (PEM, chain allowed) and key (PEM); both or
                  neither; re-read on SIGHUP without dropping open connections (a bad pair: the old one is kept).
                  The admin port stays plain HTTP
  MCP_SESSION_KEY MAC key of 2025-era session ids (≥ 32 characters): give every replica the same one
  --port N        port to listen on (default 12112; 0 picks a free one)
  --db FILE       SQLite file to keep data in across restarts; default: a fresh file in a temporary folder that is
                  removed when fakemerchant exits (fresh data every start)
  --database-url  run on PostgreSQL instead (also DATABASE_URL; --db wins over it); data persists in the schema
  --database-schema  PostgreSQL schema for the keys and the demo ledger (created if absent); default ${DEFAULT_DATABASE_SCHEMA}
  --allowed-host  another Host name to answer for (repeatable); localhost, 127.0.0.1, [::1], --host and
                  --public-host are allowed by default, any other Host gets 421
  --admin-port N  serve Prometheus metrics (/metrics) and /livez, /readyz on this port, apart from the public one
                  (off unless given; 0 picks a free one)
  --admin-host    address of the admin port (default 127.0.0.1: keep it off the public network)
  --shutdown-delay-ms N  on SIGTERM, how long to go on serving while /readyz answers 503, so a load balancer takes
                  this replica out of rotation first (default 1000; SIGINT, a Ctrl-C, does not wait; SIGHUP does not
                  stop: it reloads the TLS files and the secrets file)
  --shutdown-timeout-ms N  then, how long requests already received may take to be answered before they are cut
                  (default 10000); the exit status is 0
  A database that cannot be reached at start is waited for (one line on stderr; /readyz 503 until it opens).`

const HANG_HOOK = 'TOLLGATE_PROVIDER_TEST_HANG_AFTER_REFUND'
/** SIGTERM's default --shutdown-delay-ms: about three health checks of a balancer probing every 300 ms. */
const DEFAULT_SHUTDOWN_DELAY_MS = 1_000

/** A usage problem found after parsing: reported as `fakemerchant: <problem>` with exit 2. */
class UsageProblem extends Error {}

function int(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined
  if (!/^[0-9]+$/.test(value)) throw new UsageProblem(`${name} must be a whole number`)
  return Number(value)
}

function usage(problem: string): number {
  process.stderr.write(usageError(BIN, problem))
  return USAGE_EXIT
}

async function main(): Promise<number> {
  let values: Record<string, string | string[] | boolean | undefined>
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
        'database-url': { type: 'string' },
        'database-schema': { type: 'string' },
        'allowed-host': { type: 'string', multiple: true },
        'admin-port': { type: 'string' },
        'admin-host': { type: 'string' },
        'shutdown-timeout-ms': { type: 'string' },
        'shutdown-delay-ms': { type: 'string' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        'signing-secret-file': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
      strict: true,
    }))
  } catch (error) {
    return usage(parseArgsProblem(error))
  }
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  if (values.version === true) {
    process.stdout.write(versionLine(BIN, SERVER_INFO.version))
    return 0
  }
  const secretsFile = values['signing-secret-file'] as string | undefined
  let secrets = (process.env.SIGNING_SECRET ?? '').split(',').filter((s) => s !== '')
  if (secretsFile !== undefined) {
    if (secrets.length > 0) return usage('SIGNING_SECRET and --signing-secret-file exclude each other: give one')
    try {
      secrets = await readSecretsFile(secretsFile)
    } catch (error) {
      if (error instanceof SecretsError) return usage(`--signing-secret-file: ${error.message}`)
      throw error
    }
  }
  if (secrets.length === 0) {
    process.stderr.write(
      'fakemerchant: no signing secret. Set one, e.g.\n  SIGNING_SECRET=srmps_$(openssl rand -hex 16) npx fakemerchant\n' +
        '(the platform signs every request with it; use the same value on the calling side)\n',
    )
    return 2
  }
  // fakemerchant is the provider on invented data: a production secret would answer the platform's real customers
  // with it (and refunds no billing system made).
  if (secrets.some((s) => secretEnvironment(s) === 'production')) {
    process.stderr.write(
      `${BIN}: ${secretsFile === undefined ? 'SIGNING_SECRET' : '--signing-secret-file'} holds a production secret (srmp_…); fakemerchant serves demo data and needs a sandbox secret (srmps_…)\n`,
    )
    return USAGE_EXIT
  }
  const str = (k: string) => values[k] as string | undefined
  const tlsFiles = { certFile: str('tls-cert'), keyFile: str('tls-key') }
  if ((tlsFiles.certFile === undefined) !== (tlsFiles.keyFile === undefined))
    return usage('--tls-cert and --tls-key go together: give both or neither')
  const tlsPaths =
    tlsFiles.certFile !== undefined && tlsFiles.keyFile !== undefined
      ? { certFile: tlsFiles.certFile, keyFile: tlsFiles.keyFile }
      : undefined
  let tls: TlsCredentials | undefined
  if (tlsPaths !== undefined) {
    try {
      tls = await readTlsFiles(tlsPaths)
    } catch (error) {
      if (error instanceof TlsCredentialsError) return usage(`--tls-cert/--tls-key: ${error.message}`)
      throw error
    }
  }
  const port = str('port') === undefined ? 12112 : parsePort(str('port') as string)
  if (typeof port !== 'number') return usage(port.problem)
  const host = str('host') ?? '127.0.0.1'
  const adminPort = str('admin-port') === undefined ? undefined : parsePort(str('admin-port') as string, '--admin-port')
  if (adminPort !== undefined && typeof adminPort !== 'number') return usage(adminPort.problem)
  const adminHost = str('admin-host')
  if (adminHost !== undefined && adminPort === undefined) return usage('--admin-host needs --admin-port')
  if (adminPort !== undefined && adminPort !== 0 && adminPort === port)
    return usage('--admin-port must differ from --port')
  const publicHost = str('public-host')
  const stripPrefix = str('strip-prefix')
  let leaseMs: number | undefined
  let settleAfterMs: number | undefined
  let retentionDays: number | undefined
  let shutdownDeadlineMs: number | undefined
  let shutdownDelayMs = DEFAULT_SHUTDOWN_DELAY_MS
  try {
    // Ten minutes at most, for either: a stop longer than that is a mistake, not a drain.
    const upToTenMinutes = (flag: string) => {
      const ms = int(str(flag), `--${flag}`)
      if (ms !== undefined && ms > 600_000) throw new UsageProblem(`--${flag} must be at most 600000`)
      return ms
    }
    shutdownDelayMs = upToTenMinutes('shutdown-delay-ms') ?? DEFAULT_SHUTDOWN_DELAY_MS
    shutdownDeadlineMs = upToTenMinutes('shutdown-timeout-ms')
    leaseMs = int(str('lease-ms'), '--lease-ms')
    settleAfterMs = int(str('settle-ms'), '--settle-ms')
    retentionDays = int(str('retention-days'), '--retention-days')
  } catch (error) {
    if (error instanceof UsageProblem) return usage(error.message)
    throw error
  }
  const durability = str('durability')
  if (durability !== undefined && durability !== 'power-loss' && durability !== 'process-crash') {
    return usage('--durability must be power-loss or process-crash')
  }
  const dbProblem = str('db') === undefined ? undefined : dbPathProblem(str('db') as string)
  if (dbProblem !== undefined) return usage(`--db ${dbProblem}`)
  const sessionKey = process.env.MCP_SESSION_KEY
  if (sessionKey !== undefined && sessionKey.length < 32) return usage('MCP_SESSION_KEY must be at least 32 characters')
  // The default SQLite data lives in a temporary folder of this process, removed on exit (signals included).
  const owned: { temp?: OwnedTempDir } = {}
  const choice = chooseStore(
    { db: str('db'), databaseUrl: str('database-url'), databaseSchema: str('database-schema'), durability },
    process.env,
    () => {
      owned.temp = ownedTempDir('fakemerchant-')
      return join(owned.temp.path, 'fakemerchant.sqlite')
    },
  )
  if (!choice.ok) return usage(choice.problem)
  const temp = owned.temp
  const allowedHosts = values['allowed-host'] as string[] | undefined
  const hangOn = process.env[HANG_HOOK]
  // A signal while the start waits for its store ends the wait; once serving, it stops the server gracefully.
  const starting = new AbortController()
  let stop = (_signal: NodeJS.Signals) => starting.abort()
  process.once('SIGINT', () => stop('SIGINT'))
  process.once('SIGTERM', () => stop('SIGTERM'))
  // SIGHUP reloads (never stops): the TLS files and the secrets file, once serving; ignored while starting.
  let reload = () => {}
  process.on('SIGHUP', () => reload())
  try {
    const provider = await startProvider({
      signal: starting.signal,
      onWaitingForStore: (error) => {
        const why = explainStoreFailure(error, choice) ?? `${error.message} (${error.outage?.code ?? 'unavailable'})`
        process.stderr.write(`${BIN}: ${why}; waiting for it (/readyz answers 503 until it opens)\n`)
      },
      ...(shutdownDeadlineMs !== undefined && { shutdownDeadlineMs }),
      secrets,
      host,
      port,
      ...(tls !== undefined && { tls }),
      store: choice.store,
      ...(publicHost !== undefined && { publicHost }),
      ...(stripPrefix !== undefined && { stripPrefix }),
      ...(leaseMs !== undefined && { inProgressLeaseMs: leaseMs }),
      // Replicas of one deployment share this key so a 2025-era session opened on one continues on another.
      ...(sessionKey !== undefined && { sessionKey }),
      ...(allowedHosts !== undefined && { allowedHosts }),
      ...(retentionDays !== undefined && { retentionDays }),
      ...(adminPort !== undefined && { adminPort }),
      ...(adminHost !== undefined && { adminHost }),
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
    process.stdout.write(`fakemerchant: serving ${provider.url} (data: ${choice.where})\n`)
    process.stdout.write(`fakemerchant: REST at ${provider.restUrl} (base URL ${provider.baseUrl})\n`)
    if (provider.adminUrl !== undefined)
      process.stdout.write(`fakemerchant: metrics at ${provider.adminUrl}/metrics (admin port)\n`)
    reload = reloader(provider, tlsPaths, secretsFile)
    stop = (signal) => {
      // SIGTERM is what orchestrators send: keep serving until the balancer has seen /readyz 503. Ctrl-C does not wait.
      void provider.shutdown({ delayMs: signal === 'SIGTERM' ? shutdownDelayMs : 0 }).then(({ cut }) => {
        if (cut > 0) process.stderr.write(`${BIN}: ${cut} request(s) cut at the shutdown deadline\n`)
        temp?.remove()
        process.exit(0)
      })
    }
    return -1
  } catch (error) {
    temp?.remove()
    if (starting.signal.aborted) return 0
    // The admin listener starts after the public one: a listen error naming its address is the admin port's.
    const failed = error as { port?: unknown; address?: unknown } | null
    const admin = { host: adminHost ?? '127.0.0.1', port: adminPort ?? -1 }
    const adminFailed =
      adminPort !== undefined &&
      ((failed?.port === adminPort && adminPort !== port) || (admin.host !== host && failed?.address === admin.host))
    const problem = adminFailed
      ? listenProblem(error, admin, { port: '--admin-port', host: '--admin-host' })
      : listenProblem(error, { host, port })
    if (problem !== undefined) {
      process.stderr.write(`${BIN}: ${problem}\n`)
      return 1
    }
    const explained = explainStoreFailure(error, choice)
    if (explained !== undefined) {
      process.stderr.write(`${BIN}: ${explained}\n`)
      return 1
    }
    const message = error instanceof Error ? error.message : 'unknown error'
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : ''
    process.stderr.write(`${BIN}: ${message}${cause}\n`)
    return 1
  }
}

/**
 * SIGHUP's reload: re-reads the TLS pair and the secrets file and hands each to the running provider. One reload at a
 * time (a SIGHUP during one runs another after it). One stderr line per outcome: `reloaded: …` or, for a pair or a
 * secrets file that cannot be used, what was refused (never a value) and that the old one is kept.
 */
function reloader(
  provider: RunningProvider,
  tlsPaths: { certFile: string; keyFile: string } | undefined,
  secretsFile: string | undefined,
): () => void {
  let running: Promise<void> | undefined
  let again = false
  const once = async () => {
    const done: string[] = []
    if (tlsPaths !== undefined) {
      try {
        provider.setTls(await readTlsFiles(tlsPaths))
        done.push('TLS certificate')
      } catch (error) {
        if (!(error instanceof TlsCredentialsError)) throw error
        process.stderr.write(`${BIN}: reload: ${error.message}; the old TLS certificate is kept\n`)
      }
    }
    if (secretsFile !== undefined) {
      try {
        const secrets = await readSecretsFile(secretsFile)
        provider.setSecrets(secrets)
        done.push(`signing secrets (${secrets.length})`)
      } catch (error) {
        if (!(error instanceof SecretsError)) throw error
        process.stderr.write(`${BIN}: reload: ${error.message}; the old signing secrets are kept\n`)
      }
    }
    if (tlsPaths === undefined && secretsFile === undefined)
      process.stderr.write(`${BIN}: reload: nothing to reload (no --tls-cert or --signing-secret-file)\n`)
    else if (done.length > 0) process.stderr.write(`${BIN}: reloaded: ${done.join(', ')}\n`)
  }
  const run = (): Promise<void> =>
    once()
      // Never a crash on SIGHUP: anything unexpected is one line (its class only) and the server goes on as it was.
      .catch((error: unknown) => {
        process.stderr.write(
          `${BIN}: reload failed (${error instanceof Error ? error.name : 'unknown'}); nothing changed\n`,
        )
      })
      .then(() => {
        if (!again) {
          running = undefined
          return
        }
        again = false
        return run()
      })
  return () => {
    if (running !== undefined) {
      again = true
      return
    }
    running = run()
  }
}

exitQuietlyOnBrokenPipe() // `fakemerchant | head`: a reader that goes away stops the server quietly (exit 141)
const code = await main()
if (code >= 0) process.exitCode = code
