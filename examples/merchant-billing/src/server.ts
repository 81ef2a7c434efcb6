// node dist/src/server.js — Acme's provider as it runs in production, configured by the environment (the README's
// "Configuration" table; deploy/merchant-billing.service runs it under systemd):
//   SIGTERM  graceful stop: /readyz answers 503 at once, serving goes on for SHUTDOWN_DELAY_MS (the balancer takes
//            this replica out), then every request received is answered within SHUTDOWN_DEADLINE_MS; exit 0
//   SIGINT   the same without the delay (Ctrl-C)
//   SIGHUP   re-reads TLS_CERT_FILE/TLS_KEY_FILE and SIGNING_SECRET_FILE; a bad new file is refused, logged, and the
//            old certificate or secrets are kept (systemctl reload)
// A configuration problem exits 2 with one line naming the variable (never its value); systemd does not restart it.
import {
  checkSecretList,
  ProviderError,
  readSecretsFile,
  readTlsFiles,
  type TlsCredentials,
  TlsCredentialsError,
} from '@tollgate/provider'
import { type AcmeConfig, ConfigError, readConfig } from './config.js'
import { type AcmeProvider, startAcmeProvider } from './start.js'

const NAME = 'acme-provider'

/** One JSON line on stderr, like the provider's own (pino) lines: facts, never a secret or a file's content. */
function log(level: 'info' | 'warn' | 'error', msg: string, facts: Record<string, unknown> = {}): void {
  const value = { info: 30, warn: 40, error: 50 }[level]
  process.stderr.write(`${JSON.stringify({ level: value, time: Date.now(), service: NAME, ...facts, msg })}\n`)
}

/** A problem with the configuration: one line naming the variable, exit 2. */
function configFailure(message: string): never {
  process.stderr.write(`${NAME}: ${message}\n`)
  process.exit(2)
}

/** Which variables a TLS problem is about (the error says which part: certificate, key, or the two together). */
function tlsVariable(error: TlsCredentialsError): string {
  if (error.which === 'cert') return 'TLS_CERT_FILE'
  if (error.which === 'key') return 'TLS_KEY_FILE'
  return 'TLS_CERT_FILE/TLS_KEY_FILE'
}

async function loadTls(config: AcmeConfig): Promise<TlsCredentials | undefined> {
  return config.tls === undefined ? undefined : await readTlsFiles(config.tls)
}

async function loadSecrets(config: AcmeConfig): Promise<string[]> {
  if ('file' in config.secrets) return await readSecretsFile(config.secrets.file)
  checkSecretList(config.secrets.values)
  return config.secrets.values
}

const secretsVariable = (config: AcmeConfig) => ('file' in config.secrets ? 'SIGNING_SECRET_FILE' : 'SIGNING_SECRET')

let config: AcmeConfig
try {
  config = readConfig(process.env)
} catch (error) {
  if (error instanceof ConfigError) configFailure(error.message)
  throw error
}

// Signals before anything starts: SIGTERM while waiting for the database ends the wait; SIGHUP (whose default is to
// end the process) does nothing until there is something to reload.
let acme: AcmeProvider | undefined
const starting = new AbortController()
let stopping = false
function stop(signal: NodeJS.Signals): void {
  if (stopping) return
  stopping = true
  if (acme === undefined) {
    starting.abort(new Error(`${signal} before the server was ready`))
    return
  }
  const delayMs = signal === 'SIGINT' ? 0 : config.shutdownDelayMs
  log('info', 'stopping: every request received will be answered', { signal, delayMs })
  acme.shutdown({ delayMs, deadlineMs: config.shutdownDeadlineMs }).then(
    (report) => {
      log('info', 'stopped', { cut: report.cut, forced: report.forced })
      process.exit(0)
    },
    (error: unknown) => {
      log('error', 'the stop failed', { err: (error as Error).name, code: (error as { code?: unknown }).code })
      process.exit(1)
    },
  )
}
process.on('SIGTERM', () => stop('SIGTERM'))
process.on('SIGINT', () => stop('SIGINT'))

/** Re-reads what can change without a restart; each part on its own, a refused part keeps the old one. */
async function reload(): Promise<void> {
  if (acme === undefined || stopping) return
  const provider = acme.provider
  const started = performance.now()
  const done: string[] = []
  if (config.tls !== undefined) {
    try {
      provider.setTls((await loadTls(config)) as TlsCredentials)
      done.push('tls')
    } catch (error) {
      const variable = error instanceof TlsCredentialsError ? tlsVariable(error) : 'TLS_CERT_FILE/TLS_KEY_FILE'
      log('warn', 'TLS files not reloaded: the old certificate is kept', {
        variable,
        code: (error as { code?: unknown }).code,
        reason: (error as Error).message,
      })
    }
  }
  if ('file' in config.secrets) {
    try {
      const secrets = await readSecretsFile(config.secrets.file)
      provider.setSecrets(secrets)
      done.push('secrets')
    } catch (error) {
      log('warn', 'signing secrets not reloaded: the old ones are kept', {
        variable: 'SIGNING_SECRET_FILE',
        code: (error as { code?: unknown }).code,
        reason: (error as Error).message,
      })
    }
  }
  log('info', 'reload finished', { reloaded: done, ms: Math.round(performance.now() - started) })
}
let reloads = Promise.resolve()
process.on('SIGHUP', () => {
  reloads = reloads.then(reload)
})

let tls: TlsCredentials | undefined
let secrets: string[]
try {
  tls = await loadTls(config)
} catch (error) {
  if (error instanceof TlsCredentialsError) configFailure(`${tlsVariable(error)}: ${error.message} (${error.code})`)
  throw error
}
try {
  secrets = await loadSecrets(config)
} catch (error) {
  if (error instanceof ProviderError) configFailure(`${secretsVariable(config)}: ${error.message} (${error.code})`)
  throw error
}

try {
  acme = await startAcmeProvider({
    secrets,
    host: config.host,
    port: config.port,
    ...(config.databaseUrl !== undefined && { databaseUrl: config.databaseUrl }),
    ...(config.databaseSchema !== undefined && { schema: config.databaseSchema }),
    ...(config.dataDir !== undefined && { dataDir: config.dataDir }),
    seedDemo: config.seedDemo,
    serve: {
      signal: starting.signal,
      onWaitingForStore: (error) =>
        log('warn', 'the key store cannot be reached; waiting for it (/readyz answers 503 until it opens)', {
          code: error.code,
        }),
      ...(config.publicHost !== undefined && { publicHost: config.publicHost }),
      ...(config.stripPrefix !== undefined && { stripPrefix: config.stripPrefix }),
      ...(config.adminPort !== undefined && { adminPort: config.adminPort }),
      ...(config.adminHost !== undefined && { adminHost: config.adminHost }),
      ...(tls !== undefined && { tls }),
      ...(config.sessionKey !== undefined && { sessionKey: config.sessionKey }),
      ...(config.retentionDays !== undefined && { retentionDays: config.retentionDays }),
      shutdownDelayMs: config.shutdownDelayMs,
      shutdownDeadlineMs: config.shutdownDeadlineMs,
    },
  })
} catch (error) {
  if (starting.signal.aborted) process.exit(0)
  const code = (error as { code?: unknown }).code
  if (code === 'EADDRINUSE') {
    process.stderr.write(`${NAME}: the address is in use: choose another PORT (or ADMIN_PORT), or stop what holds it\n`)
    process.exit(1)
  }
  if (error instanceof ProviderError) configFailure(`${error.message} (${error.code})`)
  throw error
}
const running = acme.provider
console.log(
  `${NAME}: MCP at ${running.url}, REST at ${running.baseUrl}${running.adminUrl !== undefined ? `, admin at ${running.adminUrl}` : ''}`,
)
