// The server's configuration, read from the environment (systemd's EnvironmentFile, a container's env): every variable
// checked before anything starts, and a problem reported as one line naming the variable — never its value, which may
// be a secret or hold a password (DATABASE_URL).

/** A configuration problem: `variable` is the environment variable at fault. The server exits 2 with the message. */
export class ConfigError extends Error {
  readonly code = 'ERR_ACME_CONFIG'
  readonly variable: string
  constructor(variable: string, problem: string) {
    super(`${variable} ${problem}`)
    this.name = 'ConfigError'
    this.variable = variable
  }
}

export interface AcmeConfig {
  /** HOST: the listen address; default 127.0.0.1. */
  host: string
  /** PORT: the listen port; default 8080; 0 = any free port. */
  port: number
  /** PUBLIC_HOST: the host name the platform calls and signs (e.g. billing.acme.example). */
  publicHost?: string
  /** STRIP_PREFIX: the path prefix the proxy strips before forwarding (e.g. /billing). */
  stripPrefix?: string
  /** ADMIN_PORT: Prometheus /metrics, /livez and /readyz on a port of their own. Off unless set. */
  adminPort?: number
  /** ADMIN_HOST: the admin listener's address; default 127.0.0.1. */
  adminHost?: string
  /** TLS_CERT_FILE and TLS_KEY_FILE (both or neither): serve HTTPS; re-read on SIGHUP. */
  tls?: { certFile: string; keyFile: string }
  /** SIGNING_SECRET_FILE (one secret a line, re-read on SIGHUP) or SIGNING_SECRET (one, or two split by a comma). */
  secrets: { file: string } | { values: string[] }
  /** DATABASE_URL: PostgreSQL for the billing tables and the keys; unset: SQLite files in dataDir. */
  databaseUrl?: string
  /** DATABASE_SCHEMA: the billing tables' PostgreSQL schema (the keys in `<schema>_keys`); default acme. */
  databaseSchema?: string
  /** ACME_DATA_DIR: the SQLite files' folder; default the current folder. */
  dataDir?: string
  /** ACME_SEED_DEMO=1: demo rows in empty billing tables (sandbox trials only). */
  seedDemo: boolean
  /** MCP_SESSION_KEY: the 2025-era session ids' key, the same on every replica (≥ 32 characters). */
  sessionKey?: string
  /** RETENTION_DAYS: how long the key store keeps each idempotency key and its outcome (≥ 30); default 30. */
  retentionDays?: number
  /** SHUTDOWN_DELAY_MS: on SIGTERM, serve on with /readyz 503 this long first; default 3000. */
  shutdownDelayMs: number
  /** SHUTDOWN_DEADLINE_MS: then answer what was received within this long; default 10000. */
  shutdownDeadlineMs: number
}

/** Every variable the server reads, in the README's order. */
export const CONFIG_VARIABLES = [
  'HOST',
  'PORT',
  'PUBLIC_HOST',
  'STRIP_PREFIX',
  'ADMIN_PORT',
  'ADMIN_HOST',
  'TLS_CERT_FILE',
  'TLS_KEY_FILE',
  'SIGNING_SECRET_FILE',
  'SIGNING_SECRET',
  'DATABASE_URL',
  'DATABASE_SCHEMA',
  'ACME_DATA_DIR',
  'ACME_SEED_DEMO',
  'MCP_SESSION_KEY',
  'RETENTION_DAYS',
  'SHUTDOWN_DELAY_MS',
  'SHUTDOWN_DEADLINE_MS',
] as const

export const DEFAULT_SHUTDOWN_DELAY_MS = 3_000
export const DEFAULT_SHUTDOWN_DEADLINE_MS = 10_000

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/
const IPV6 = /^[0-9A-Fa-f:.]+$/

/** Reads and checks the configuration; throws ConfigError naming the first variable at fault. */
export function readConfig(env: NodeJS.ProcessEnv): AcmeConfig {
  // An empty value counts as unset: EnvironmentFile lines like `PUBLIC_HOST=` are common.
  const get = (name: (typeof CONFIG_VARIABLES)[number]) => {
    const value = env[name]
    return value === undefined || value.trim() === '' ? undefined : value.trim()
  }
  const integer = (name: (typeof CONFIG_VARIABLES)[number], min: number, max: number): number | undefined => {
    const raw = get(name)
    if (raw === undefined) return undefined
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max)
      throw new ConfigError(name, `must be a whole number from ${min} to ${max}`)
    return Number(raw)
  }

  const host = get('HOST') ?? '127.0.0.1'
  if (!HOST_NAME.test(host) && !IPV6.test(host))
    throw new ConfigError('HOST', 'must be an address to listen on (an IP address or a host name, no port)')
  const port = integer('PORT', 0, 65_535) ?? 8080

  const publicHost = get('PUBLIC_HOST')
  if (publicHost !== undefined) {
    const [name, publicPort, extra] = publicHost.split(':')
    if (
      extra !== undefined ||
      name === undefined ||
      !HOST_NAME.test(name) ||
      (publicPort !== undefined && !/^[1-9]\d{0,4}$/.test(publicPort))
    )
      throw new ConfigError('PUBLIC_HOST', 'must be the public host name (billing.example.com), a port only if not 443')
  }
  const stripPrefix = get('STRIP_PREFIX')
  if (stripPrefix !== undefined && !/^(\/[A-Za-z0-9._~-]+)+$/.test(stripPrefix))
    throw new ConfigError('STRIP_PREFIX', "must be a path prefix like /billing: starting with '/', not ending with '/'")

  const adminPort = integer('ADMIN_PORT', 0, 65_535)
  if (adminPort !== undefined && adminPort !== 0 && adminPort === port)
    throw new ConfigError('ADMIN_PORT', 'must differ from PORT')
  const adminHost = get('ADMIN_HOST')
  if (adminHost !== undefined && adminPort === undefined) throw new ConfigError('ADMIN_HOST', 'needs ADMIN_PORT')
  if (adminHost !== undefined && !HOST_NAME.test(adminHost) && !IPV6.test(adminHost))
    throw new ConfigError('ADMIN_HOST', 'must be an address to listen on (an IP address or a host name, no port)')

  const certFile = get('TLS_CERT_FILE')
  const keyFile = get('TLS_KEY_FILE')
  if (certFile !== undefined && keyFile === undefined)
    throw new ConfigError('TLS_KEY_FILE', 'must be set with TLS_CERT_FILE (the certificate’s private key, PEM)')
  if (keyFile !== undefined && certFile === undefined)
    throw new ConfigError('TLS_CERT_FILE', 'must be set with TLS_KEY_FILE (the certificate chain, PEM)')

  const secretsFile = get('SIGNING_SECRET_FILE')
  const secretValue = get('SIGNING_SECRET')
  if (secretsFile !== undefined && secretValue !== undefined)
    throw new ConfigError('SIGNING_SECRET', 'and SIGNING_SECRET_FILE are both set: keep one (the file can be rotated)')
  if (secretsFile === undefined && secretValue === undefined)
    throw new ConfigError(
      'SIGNING_SECRET_FILE',
      'is not set: name the file holding the signing secret the platform gave you (or set SIGNING_SECRET)',
    )
  let secrets: AcmeConfig['secrets']
  if (secretsFile !== undefined) secrets = { file: secretsFile }
  else {
    const values = (secretValue as string).split(',').map((s) => s.trim())
    if (values.some((s) => s === '') || values.length > 2)
      throw new ConfigError('SIGNING_SECRET', 'must be one secret, or two (old,new) separated by one comma')
    secrets = { values }
  }

  const databaseUrl = get('DATABASE_URL')
  if (databaseUrl !== undefined) {
    let url: URL | undefined
    try {
      url = new URL(databaseUrl)
    } catch {
      url = undefined
    }
    if (url === undefined || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:'))
      throw new ConfigError('DATABASE_URL', 'must be a postgres:// URL (postgres://user:password@host:5432/database)')
  }
  const databaseSchema = get('DATABASE_SCHEMA')
  if (databaseSchema !== undefined && databaseUrl === undefined)
    throw new ConfigError('DATABASE_SCHEMA', 'needs DATABASE_URL (a PostgreSQL schema)')
  if (databaseSchema !== undefined && !/^[a-z_][a-z0-9_]{0,50}$/.test(databaseSchema))
    throw new ConfigError('DATABASE_SCHEMA', 'must be a lower-case SQL name: a-z, 0-9 and _, at most 51 characters')
  const dataDir = get('ACME_DATA_DIR')
  if (databaseUrl !== undefined && dataDir !== undefined)
    throw new ConfigError('ACME_DATA_DIR', 'is for the SQLite files and DATABASE_URL is set: keep one')

  const seed = get('ACME_SEED_DEMO')
  if (seed !== undefined && seed !== '0' && seed !== '1') throw new ConfigError('ACME_SEED_DEMO', 'must be 1 or 0')

  const sessionKey = get('MCP_SESSION_KEY')
  if (sessionKey !== undefined && sessionKey.length < 32)
    throw new ConfigError('MCP_SESSION_KEY', 'must be at least 32 characters (openssl rand -hex 32)')

  const retentionDays = integer('RETENTION_DAYS', 30, 3_650)
  const shutdownDelayMs = integer('SHUTDOWN_DELAY_MS', 0, 600_000) ?? DEFAULT_SHUTDOWN_DELAY_MS
  const shutdownDeadlineMs = integer('SHUTDOWN_DEADLINE_MS', 0, 600_000) ?? DEFAULT_SHUTDOWN_DEADLINE_MS

  return {
    host,
    port,
    ...(publicHost !== undefined && { publicHost }),
    ...(stripPrefix !== undefined && { stripPrefix }),
    ...(adminPort !== undefined && { adminPort }),
    ...(adminHost !== undefined && { adminHost }),
    ...(certFile !== undefined && keyFile !== undefined && { tls: { certFile, keyFile } }),
    secrets,
    ...(databaseUrl !== undefined && { databaseUrl }),
    ...(databaseSchema !== undefined && { databaseSchema }),
    ...(dataDir !== undefined && { dataDir }),
    seedDemo: seed === '1',
    ...(sessionKey !== undefined && { sessionKey }),
    ...(retentionDays !== undefined && { retentionDays }),
    shutdownDelayMs,
    shutdownDeadlineMs,
  }
}
