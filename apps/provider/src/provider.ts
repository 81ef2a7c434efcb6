// startProvider: wires signing admission, the two MCP legs, the rules, the store and the billing port.
import { createServer as createHttpServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler } from '@modelcontextprotocol/server'
import { SignatureVerifier, type SigningEnvironment, secretEnvironment } from '@tollgate/signing'
import type { Logger } from 'pino'
import { DemoLedger, type DemoLedgerOptions } from './billing/demo-ledger.js'
import type { BillingPort } from './billing/port.js'
import { NoSecretError } from './errors.js'
import { createAdmission } from './http/authorize.js'
import { createHandler } from './http/handler.js'
import { LegacySessions } from './http/legacy-sessions.js'
import { createModernFastPath } from './http/modern-fast-path.js'
import { createServer } from './mcp/create-server.js'
import { listedTools } from './mcp/tool-table.js'
import { ProviderRules } from './rules/provider-rules.js'
import { demoLedgerStore } from './store/ledger-store.js'
import { openPostgresStore } from './store/postgres-store.js'
import { startPurgeJob } from './store/purge.js'
import { openSqliteStore, type SqliteDurability } from './store/sqlite-store.js'
import type { Store } from './store/store.js'

export type StoreOptions =
  /** durability: see openSqliteStore; default 'power-loss' (every commit fsynced). */
  | { kind: 'sqlite'; file: string; durability?: SqliteDurability }
  | { kind: 'postgres'; connectionString: string; schema?: string }

export interface ProviderOptions {
  /** Signing secrets: one, or two (old and new) while rotating. */
  secrets: readonly string[]
  /** Default: the secrets' environment by prefix (srmps_ sandbox, srmp_ production). Production refuses srmps_. */
  environment?: SigningEnvironment
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
  /** Default: the demo ledger (fakemerchant data), persisted in the same store. */
  billing?: BillingPort
  /** Options of the default demo ledger (ignored with billing). */
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
  /** Largest accepted request body; default 1 MiB (larger → 413). */
  maxBodyBytes?: number
  /** Answer well-formed 2026-07-28 tools/call requests without a per-request McpServer (same bytes). Default true. */
  modernFastPath?: boolean
  /** Clock for rules, ledger and purge (epoch ms); signatures always use the real clock. */
  now?: () => number
}

export interface RunningProvider {
  /** http://host:port/path */
  url: string
  port: number
  store: Store
  billing: BillingPort
  rules: ProviderRules
  close(): Promise<void>
}

async function openStore(options: StoreOptions | undefined): Promise<Store> {
  const s = options ?? { kind: 'sqlite', file: 'tollgate-provider.sqlite' }
  return s.kind === 'sqlite'
    ? openSqliteStore(s.file, s.durability !== undefined ? { durability: s.durability } : {})
    : openPostgresStore({ connectionString: s.connectionString, ...(s.schema !== undefined && { schema: s.schema }) })
}

async function defaultLogger(): Promise<Logger> {
  const { pino } = await import('pino')
  return pino({ level: 'info', base: { service: 'tollgate-provider' } }, pino.destination(2))
}

/** Starts a merchant-provider/v1 MCP server. Throws TypeError/RangeError on bad options, before listening. */
export async function startProvider(options: ProviderOptions): Promise<RunningProvider> {
  const secrets = options.secrets.filter((s) => s !== '')
  if (secrets.length === 0) throw new NoSecretError()
  const environment = options.environment ?? secretEnvironment(secrets[0] as string)
  if (environment === undefined)
    throw new RangeError('a signing secret starts with srmps_ (sandbox) or srmp_ (production)')
  const verifier = new SignatureVerifier({ environment, secrets })
  const retentionDays = options.retentionDays ?? 30
  if (!Number.isInteger(retentionDays) || retentionDays < 30)
    throw new RangeError('retentionDays must be a whole number ≥ 30')
  const path = options.path ?? '/mcp'
  if (!path.startsWith('/')) throw new RangeError("path must start with '/'")
  const admit = createAdmission({
    verifier,
    ...(options.publicHost !== undefined && { publicHost: options.publicHost }),
    ...(options.stripPrefix !== undefined && { stripPrefix: options.stripPrefix }),
    ...(options.bearerToken !== undefined && { bearerToken: options.bearerToken }),
    ...(options.edgeHeaders !== undefined && { edgeHeaders: options.edgeHeaders }),
  })
  const logger = options.logger === false ? undefined : (options.logger ?? (await defaultLogger()))
  const now = options.now ?? Date.now

  const store = await openStore(options.store)
  try {
    let billing = options.billing
    if (billing === undefined) {
      const ledger = new DemoLedger(demoLedgerStore(store), { now, ...options.demoLedger })
      await ledger.seed()
      billing = ledger
    }
    const described = await billing.describe()
    const tools = listedTools((described.capabilities ?? {}) as Record<string, unknown>)
    const rules = new ProviderRules({
      store,
      billing,
      now,
      ...(options.inProgressLeaseMs !== undefined && { inProgressLeaseMs: options.inProgressLeaseMs }),
    })
    const mcp = createMcpHandler(({ era }) => createServer({ rules, tools, logger, era }), {
      legacy: 'reject',
      responseMode: options.responseMode ?? 'auto',
      onerror: (e) => logger?.debug({ err_name: e.name }, 'mcp protocol error'),
    })
    const legacy = new LegacySessions({
      createServer: () => createServer({ rules, tools, logger, era: 'legacy' }),
      jsonResponses: (options.legacyResponseMode ?? 'json') === 'json',
      now,
      ...(options.sessionIdleTtlMs !== undefined && { idleTtlMs: options.sessionIdleTtlMs }),
      ...(options.maxSessions !== undefined && { maxSessions: options.maxSessions }),
    })
    const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024
    const handler = createHandler({
      path,
      maxBodyBytes,
      admit,
      modern: toNodeHandler(mcp),
      // The fast path answers JSON, as the SDK does in 'auto' and 'json' modes; 'sse' stays with the SDK.
      ...(options.modernFastPath !== false &&
        options.responseMode !== 'sse' && {
          fastPath: createModernFastPath({ rules, tools, logger, era: 'modern' }, maxBodyBytes),
        }),
      legacy,
      logger,
    })
    const server: Server = createHttpServer((req, res) => {
      handler(req, res).catch((error: unknown) => {
        logger?.error({ err_name: error instanceof Error ? error.name : 'unknown' }, 'request failed')
        if (!res.headersSent) {
          const body = '{"error":{"code":"internal_error","message":"the provider failed","retryable":true}}'
          res.writeHead(500, { 'content-type': 'application/json' }).end(body)
        } else res.destroy()
      })
    })
    server.keepAliveTimeout = 65_000
    const purge = startPurgeJob({ store, retentionDays, now, logger })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve())
    })
    const address = server.address() as AddressInfo
    const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address
    logger?.info(
      { host: address.address, port: address.port, path, environment, tools: tools.map((t) => t.tool.name) },
      'provider listening',
    )
    let closing: Promise<void> | undefined
    return {
      url: `http://${hostForUrl}:${address.port}${path}`,
      port: address.port,
      store,
      billing,
      rules,
      close: () => {
        closing ??= (async () => {
          await purge.stop()
          await legacy.closeAll()
          await mcp.close().catch(() => {})
          server.closeAllConnections()
          await new Promise<void>((resolve) => server.close(() => resolve()))
          await store.close()
        })()
        return closing
      },
    }
  } catch (error) {
    await store.close().catch(() => {})
    throw error
  }
}
