// What startProvider takes and what it returns: the public option and handle types (re-exported by provider.ts).
import type { ConnectionLimits, SessionStore, TlsCredentials } from '@tollgate/mcp-endpoint'
import type { Health, ShutdownReport } from '@tollgate/operability'
import type { SigningEnvironment } from '@tollgate/signing'
import type { Logger } from 'pino'
import type { DemoLedgerOptions } from '../billing/demo-ledger.js'
import type { BillingPort } from '../billing/port.js'
import type { StoreError } from '../errors.js'
import type { ProviderMetrics } from '../metrics.js'
import type { ProviderRules } from '../rules/provider-rules.js'
import type { SqliteDurability } from '../store/sqlite-store.js'
import type { Store } from '../store/store.js'

export type StoreOptions =
  /** durability: see openSqliteStore; default 'power-loss' (every commit fsynced). */
  | { kind: 'sqlite'; file: string; durability?: SqliteDurability }
  | { kind: 'postgres'; connectionString: string; schema?: string }

export interface ProviderOptions {
  /** Signing secrets: one, or two (old and new) while rotating. */
  secrets: readonly string[]
  /** Default: the secrets' environment by prefix (srmps_ sandbox, srmp_ production). Production refuses srmps_. */
  environment?: SigningEnvironment
  /**
   * Serve HTTPS with this certificate (PEM; the leaf first, then any intermediates) and key (PEM); default plain HTTP.
   * A pair that cannot serve throws TlsCredentialsError (ERR_MCP_ENDPOINT_TLS) before listening. See setTls.
   */
  tls?: TlsCredentials
  /** Listen address; default 127.0.0.1. */
  host?: string
  /** Listen port; default 0 (any free port). */
  port?: number
  /** MCP endpoint path; default /mcp. */
  path?: string
  /** Host name the platform signs (your public host); default: the request's Host header. */
  publicHost?: string
  /** Path prefix your reverse proxy strips before forwarding; the platform's signature covers it. */
  stripPrefix?: string
  /** Require `Authorization: Bearer <token>` on every request. */
  bearerToken?: string
  /** Require these headers with exactly these values on every request. */
  edgeHeaders?: Record<string, string>
  /** Default: SQLite file ./tollgate-provider.sqlite. */
  store?: StoreOptions
  /**
   * Your billing system; this or `demoLedger` is required (NoBillingError without either). In production (an srmp_
   * secret) it must be yours: a DemoLedger instance there throws DemoInProductionError, as does no billing at all.
   */
  billing?: BillingPort
  /**
   * Serve the demo ledger (fakemerchant data, persisted in the same store), opt-in and sandbox only: `{}` for the
   * defaults. With `billing` it is a TypeError (two billing systems); in production, DemoInProductionError.
   */
  demoLedger?: DemoLedgerOptions
  /** pino logger; false = silent. Default: pino at info on stderr. */
  logger?: Logger | false
  /** Keys and results are kept this many days after their last change; ≥ 30 (RangeError below). Default 30. */
  retentionDays?: number
  /** How long a key's in-progress claim blocks others before it counts as abandoned by a crash. Default 30 000 ms. */
  inProgressLeaseMs?: number
  /** 2026-07-28 responses: 'auto' (default: JSON unless notifications precede the result), 'json' or 'sse'. */
  responseMode?: 'json' | 'sse' | 'auto'
  /** 2025-era session responses: 'json' (default) or 'sse'. */
  legacyResponseMode?: 'json' | 'sse'
  /** Idle legacy sessions close after this long; default 300 000 ms. */
  sessionIdleTtlMs?: number
  /** Most open legacy sessions; default 1000. */
  maxSessions?: number
  /**
   * MAC key of 2025-era session ids (≥ 32 characters), the same on every replica. Default: random per process
   * (sessions then live only on this process).
   */
  sessionKey?: string
  /** Where open 2025-era sessions are recorded. Default: the PostgreSQL database with a postgres store, else memory. */
  sessionStore?: SessionStore
  /** Largest accepted request body; default 1 MiB (larger → 413). */
  maxBodyBytes?: number
  /** The whole body must arrive within this many ms (else 408); default 30 000. */
  bodyTimeoutMs?: number
  /** At most this many request bodies being received at once (else 503); default 256. */
  maxUnfinishedBodies?: number
  /** Header timeout, request timeout, keep-alive and connection caps (see @tollgate/mcp-endpoint). */
  connections?: ConnectionLimits
  /**
   * Host names this server answers for, besides localhost, 127.0.0.1, [::1], publicHost and the listen host (a
   * foreign Host gets 421, a foreign Origin 403). false turns the check off (only behind a proxy that checks).
   */
  allowedHosts?: readonly string[] | false
  /**
   * Answer well-formed tools/call requests (2026-07-28, and 2025-era sessions in JSON mode) without a per-request
   * McpServer (same bytes as the SDK). Default true.
   */
  modernFastPath?: boolean
  /** Clock for rules, ledger and purge (epoch ms); signatures always use the real clock. */
  now?: () => number
  /**
   * Port of the admin listener (GET /metrics for Prometheus, /livez, /readyz), separate from the public port. Off
   * unless given; 0 = any free port (see RunningProvider.adminUrl).
   */
  adminPort?: number
  /** Address of the admin listener; default 127.0.0.1 (keep it off the public network). */
  adminHost?: string
  /** How long `shutdown()` lets requests already received finish before cutting them; default 10 000 ms. */
  shutdownDeadlineMs?: number
  /**
   * How long `shutdown()` goes on serving as usual, with /readyz answering 503, before it stops accepting: the time a
   * load balancer's health checks take to take the server out of rotation. Default 0.
   */
  shutdownDelayMs?: number
  /**
   * Stops a start that is still waiting for its store (see startProvider): the promise rejects with the signal's
   * reason and nothing is left listening.
   */
  signal?: AbortSignal
  /** Told once, with the first failure, when the store cannot be reached at start and the start waits for it. */
  onWaitingForStore?: (error: StoreError) => void
}

export interface RunningProvider {
  /** The MCP endpoint: http://host:port/path (https:// with tls) */
  url: string
  /** The REST binding's base URL (what the platform is configured with): http://host:port (https:// with tls) */
  baseUrl: string
  /** Where the REST routes live: http://host:port/v1/ (https:// with tls) */
  restUrl: string
  port: number
  store: Store
  billing: BillingPort
  rules: ProviderRules
  /** The admin listener's base URL (http://host:port; /metrics, /livez, /readyz) when adminPort was given. */
  adminUrl?: string
  /** The provider's metrics (its prom-client registry is `metrics.registry`), when adminPort was given. */
  metrics?: ProviderMetrics
  /** Readiness as /readyz answers it (the store's probe, cached 1 s; false once shutting down). */
  health: Health
  /** Counters a test or bench can read: how many calls the fast paths answered (2026-07-28, 2025-era). */
  diagnostics: { readonly fastPathAnswered: number; readonly legacyFastPathAnswered: number }
  /**
   * Graceful stop (SIGTERM): /readyz answers 503 at once; after the delay (default shutdownDelayMs) no new connection
   * is accepted, every request already received is answered (requests arriving meanwhile on open connections too,
   * with `Connection: close`) up to the deadline (default shutdownDeadlineMs), then what is left is cut; then the
   * store and pools close. Calling it again, or close(), returns the same stop.
   */
  shutdown(options?: { deadlineMs?: number; delayMs?: number }): Promise<ShutdownReport>
  /** Immediate stop (tests): open connections are cut, then the store and pools close. */
  close(): Promise<void>
  /**
   * Replaces the TLS certificate and key (a server started with `tls`): new handshakes get the new pair, open
   * connections keep theirs, nothing in flight is cut. A pair that cannot serve throws TlsCredentialsError
   * (ERR_MCP_ENDPOINT_TLS) and the old pair is kept; so does a server started without tls.
   */
  setTls(credentials: TlsCredentials): void
  /**
   * Replaces the signing secrets at once (one, or two while rotating: the old first). Every request verified after
   * the call uses the new list; none is verified against a mix. Throws SecretsError and keeps the old secrets on an
   * empty list, more than two, a malformed secret, or a switch between sandbox and production.
   */
  setSecrets(secrets: readonly string[]): void
}
