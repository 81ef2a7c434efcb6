// fakemerchant: the provider on the demo ledger, for trying the platform end to end on one machine. It serves both
// bindings on one port: MCP at /mcp and REST at /v1/… (the REST base URL is the bare origin).
//   SIGNING_SECRET=srmps_<random> npx fakemerchant [--port 12112] [--host 127.0.0.1] [--db FILE | --database-url URL]
// SIGHUP re-reads the TLS files and the secrets file (no restart, no connection dropped).
// main is the composition: flags → secrets → TLS → store → start → signals; each step is one function below.
import { join } from 'node:path'
import {
  exitQuietlyOnBrokenPipe,
  listenProblem,
  ownedTempDir,
  USAGE_EXIT,
  usageError,
  versionLine,
} from '@tollgate/cli'
import { readTlsFiles, type TlsCredentials, TlsCredentialsError } from '@tollgate/mcp-endpoint'
import { Closers, serialReloader } from '@tollgate/operability'
import { secretEnvironment } from '@tollgate/signing'
import { SecretsError } from './errors.js'
import { type FakemerchantFlags, HELP, readCommandLine } from './fakemerchant-flags.js'
import { chooseStore, explainStoreFailure, type StoreChoice } from './fakemerchant-store.js'
import { SERVER_INFO } from './mcp/create-server.js'
import { type ProviderOptions, type RunningProvider, startProvider } from './provider.js'
import { readSecretsFile } from './secrets.js'

const BIN = 'fakemerchant'
const HANG_HOOK = 'TOLLGATE_PROVIDER_TEST_HANG_AFTER_REFUND'

type TlsPaths = { certFile: string; keyFile: string }
/** Everything the start needs, read and checked: a step that cannot go on returns the exit status instead. */
interface Plan {
  flags: FakemerchantFlags
  secretsFile: string | undefined
  secrets: string[]
  tlsPaths: TlsPaths | undefined
  tls: TlsCredentials | undefined
  choice: Extract<StoreChoice, { ok: true }>
}

function usage(problem: string): number {
  process.stderr.write(usageError(BIN, problem))
  return USAGE_EXIT
}

async function main(): Promise<number> {
  const read = readCommandLine(process.argv.slice(2), process.env)
  if ('help' in read) {
    process.stdout.write(HELP)
    return 0
  }
  if ('version' in read) {
    process.stdout.write(versionLine(BIN, SERVER_INFO.version))
    return 0
  }
  if ('problem' in read) return usage(read.problem)
  const closers = new Closers()
  const plan = await planOf(read.flags, closers)
  if (typeof plan === 'number') return plan
  return serve(plan, closers)
}

/** Secrets, TLS and the store, in that order: the first that cannot be used is the exit status. */
async function planOf(flags: FakemerchantFlags, closers: Closers): Promise<Plan | number> {
  const secretsFile = flags['signing-secret-file']
  const secrets = await readSecrets(secretsFile)
  if (typeof secrets === 'number') return secrets
  const tlsPaths =
    flags['tls-cert'] !== undefined && flags['tls-key'] !== undefined
      ? { certFile: flags['tls-cert'], keyFile: flags['tls-key'] }
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
  // The default SQLite data lives in a temporary folder of this process, removed on exit (signals included).
  const choice = chooseStore(
    {
      db: flags.db,
      databaseUrl: flags['database-url'],
      databaseSchema: flags['database-schema'],
      durability: flags.durability,
    },
    process.env,
    () => {
      const temp = ownedTempDir('fakemerchant-')
      closers.add('data folder', () => temp.remove())
      return join(temp.path, 'fakemerchant.sqlite')
    },
  )
  if (!choice.ok) return usage(choice.problem)
  return { flags, secretsFile, secrets, tlsPaths, tls, choice }
}

/** SIGNING_SECRET or --signing-secret-file (never both): sandbox secrets only. */
async function readSecrets(secretsFile: string | undefined): Promise<string[] | number> {
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
  return secrets
}

/** The provider's options from the plan. */
function providerOptions(plan: Plan, signal: AbortSignal): ProviderOptions {
  const { flags, choice } = plan
  const sessionKey = process.env.MCP_SESSION_KEY
  const hangOn = process.env[HANG_HOOK]
  const adminPort = flags['admin-port']
  const adminHost = flags['admin-host']
  return {
    signal,
    onWaitingForStore: (error) => {
      const why = explainStoreFailure(error, choice) ?? `${error.message} (${error.outage?.code ?? 'unavailable'})`
      process.stderr.write(`${BIN}: ${why}; waiting for it (/readyz answers 503 until it opens)\n`)
    },
    ...(flags['shutdown-timeout-ms'] !== undefined && { shutdownDeadlineMs: flags['shutdown-timeout-ms'] }),
    secrets: plan.secrets,
    host: flags.host,
    port: flags.port,
    ...(plan.tls !== undefined && { tls: plan.tls }),
    store: choice.store,
    ...(flags['public-host'] !== undefined && { publicHost: flags['public-host'] }),
    ...(flags['strip-prefix'] !== undefined && { stripPrefix: flags['strip-prefix'] }),
    ...(flags['lease-ms'] !== undefined && { inProgressLeaseMs: flags['lease-ms'] }),
    // Replicas of one deployment share this key so a 2025-era session opened on one continues on another.
    ...(sessionKey !== undefined && { sessionKey }),
    ...(flags['allowed-host'] !== undefined && { allowedHosts: flags['allowed-host'] }),
    ...(flags['retention-days'] !== undefined && { retentionDays: flags['retention-days'] }),
    ...(adminPort !== undefined && { adminPort }),
    ...(adminHost !== undefined && { adminHost }),
    demoLedger: {
      ...(flags['settle-ms'] !== undefined && { settleAfterMs: flags['settle-ms'] }),
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
  }
}

/** Starts the provider and wires the signals; -1 while serving (a signal ends the process), else the exit status. */
async function serve(plan: Plan, closers: Closers): Promise<number> {
  // A signal while the start waits for its store ends the wait; once serving, it stops the server gracefully.
  const starting = new AbortController()
  let stop = (_signal: NodeJS.Signals) => starting.abort()
  process.once('SIGINT', () => stop('SIGINT'))
  process.once('SIGTERM', () => stop('SIGTERM'))
  // SIGHUP reloads (never stops): the TLS files and the secrets file, once serving; ignored while starting.
  let reload = () => {}
  process.on('SIGHUP', () => reload())
  let provider: RunningProvider
  try {
    provider = await startProvider(providerOptions(plan, starting.signal))
  } catch (error) {
    await closers.closeAll()
    if (starting.signal.aborted) return 0
    process.stderr.write(`${BIN}: ${startProblem(error, plan)}\n`)
    return 1
  }
  process.stdout.write(`fakemerchant: serving ${provider.url} (data: ${plan.choice.where})\n`)
  process.stdout.write(`fakemerchant: REST at ${provider.restUrl} (base URL ${provider.baseUrl})\n`)
  if (provider.adminUrl !== undefined)
    process.stdout.write(`fakemerchant: metrics at ${provider.adminUrl}/metrics (admin port)\n`)
  reload = reloader(provider, plan.tlsPaths, plan.secretsFile)
  let delayMs = 0
  closers.add('provider', async () => {
    const { cut } = await provider.shutdown({ delayMs })
    if (cut > 0) process.stderr.write(`${BIN}: ${cut} request(s) cut at the shutdown deadline\n`)
  })
  stop = (signal) => {
    // SIGTERM is what orchestrators send: keep serving until the balancer has seen /readyz 503. Ctrl-C does not wait.
    delayMs = signal === 'SIGTERM' ? plan.flags['shutdown-delay-ms'] : 0
    void closers.closeAll().then(() => process.exit(0))
  }
  return -1
}

/** Why the start failed, in one line: a listen error naming its flag, the store's failure, or the error's own words. */
function startProblem(error: unknown, { flags, choice }: Plan): string {
  const { host, port } = flags
  const adminPort = flags['admin-port']
  // The admin listener starts after the public one: a listen error naming its address is the admin port's.
  const failed = error as { port?: unknown; address?: unknown } | null
  const admin = { host: flags['admin-host'] ?? '127.0.0.1', port: adminPort ?? -1 }
  const adminFailed =
    adminPort !== undefined &&
    ((failed?.port === adminPort && adminPort !== port) || (admin.host !== host && failed?.address === admin.host))
  const problem = adminFailed
    ? listenProblem(error, admin, { port: '--admin-port', host: '--admin-host' })
    : listenProblem(error, { host, port })
  if (problem !== undefined) return problem
  const explained = explainStoreFailure(error, choice)
  if (explained !== undefined) return explained
  const message = error instanceof Error ? error.message : 'unknown error'
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : ''
  return `${message}${cause}`
}

/**
 * SIGHUP's reload: re-reads the TLS pair and the secrets file and hands each to the running provider, one reload at a
 * time (serialReloader). One stderr line per outcome: `reloaded: …` or, for a pair or a secrets file that cannot be
 * used, what was refused (never a value) and that the old one is kept.
 */
function reloader(provider: RunningProvider, tlsPaths: TlsPaths | undefined, secretsFile: string | undefined) {
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
  // Never a crash on SIGHUP: anything unexpected is one line (its class only) and the server goes on as it was.
  return serialReloader(once, (error) => {
    process.stderr.write(
      `${BIN}: reload failed (${error instanceof Error ? error.name : 'unknown'}); nothing changed\n`,
    )
  })
}

exitQuietlyOnBrokenPipe() // `fakemerchant | head`: a reader that goes away stops the server quietly (exit 141)
const code = await main()
if (code >= 0) process.exitCode = code
