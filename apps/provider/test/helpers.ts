// Test helpers: a signing fetch for the official clients, clients of both eras with the contract schemas loaded,
// and a provider on 127.0.0.1:0 over a SQLite file in a temp dir.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { AjvJsonSchemaValidator as AjvV2 } from '@modelcontextprotocol/client/validators/ajv'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CallToolResultSchema as CallToolResultSchemaV1 } from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator as AjvV1 } from '@modelcontextprotocol/sdk/validation/ajv-provider.js'
import { createContractAjv } from '@tollgate/contract'
import { signHeaders } from '@tollgate/signing'
import {
  type BillingPort,
  DemoLedger,
  demoLedgerStore,
  openSqliteStore,
  type ProviderOptions,
  type RunningProvider,
  startProvider,
} from '../src/index.js'

export const SECRET = 'srmps_test_0f1e2d3c4b5a69788796a5b4c3d2e1f0'

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>

export interface SigningOptions {
  secret?: string
  /** Called with each request's method and JSON-RPC method; return 'tamper' to flip one body byte after signing. */
  mutate?: (httpMethod: string, rpcMethod: string | undefined) => 'tamper' | 'stale' | undefined
  /** Records every request's method and status. */
  log?: { method: string; rpc: string | undefined; status: number; contentType: string | null; body?: string }[]
  extraHeaders?: Record<string, string>
  /** The fetch that sends (default the global one): e.g. one trusting a test CA over https. */
  fetch?: FetchLike
}

/** A fetch that signs every request (method, host, escaped path, raw body) as the platform does. */
export function signingFetch(options: SigningOptions = {}): FetchLike {
  const secret = options.secret ?? SECRET
  return async (input, init = {}) => {
    const url = new URL(String(input))
    const method = (init.method ?? 'GET').toUpperCase()
    const bodyText = typeof init.body === 'string' ? init.body : ''
    let rpc: string | undefined
    try {
      rpc = bodyText === '' ? undefined : (JSON.parse(bodyText) as { method?: string }).method
    } catch {
      rpc = undefined
    }
    const how = options.mutate?.(method, rpc)
    const when = how === 'stale' ? new Date(Date.now() - 10 * 60_000) : new Date()
    const signed = signHeaders(
      secret,
      { method, host: url.host, path: url.pathname, body: Buffer.from(bodyText, 'utf8'), key: '' },
      when,
    )
    const headers = new Headers(init.headers)
    for (const [k, v] of Object.entries({ ...signed, ...options.extraHeaders })) headers.set(k, v)
    // Tampering after signing: the bytes differ from what was signed (a space inside the JSON keeps it valid).
    const body = how === 'tamper' && bodyText !== '' ? bodyText.replace('{', '{ ') : init.body
    const res = await (options.fetch ?? fetch)(url, { ...init, headers, ...(body !== undefined && { body }) })
    const contentType = res.headers.get('content-type')
    if (options.log !== undefined) {
      const body = res.status >= 400 ? await res.clone().text() : undefined
      options.log.push({ method, rpc, status: res.status, contentType, ...(body !== undefined && { body }) })
    }
    return res
  }
}

export type Era = 'modern' | 'legacy' | 'v1'

export interface AnyClient {
  era: Era
  callTool(name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<CallResult>
  listTools(): Promise<{ name: string; inputSchema: unknown; outputSchema?: unknown }[]>
  close(): Promise<void>
  protocolEra?: string | undefined
}

export interface CallResult {
  structuredContent?: Record<string, unknown>
  content: { type: string; text?: string }[]
  isError?: boolean
}

/** Connects an official client: v2 'modern' (auto → 2026-07-28), v2 'legacy', or the v1 SDK client. */
export async function connect(url: string, era: Era, signing: SigningOptions = {}): Promise<AnyClient> {
  const fetchFn = signingFetch(signing)
  if (era === 'v1') {
    const client = new ClientV1(
      { name: 'tollgate-test-v1', version: '0.0.1' },
      { jsonSchemaValidator: new AjvV1(createContractAjv() as never) },
    )
    const transport = new TransportV1(new URL(url), { fetch: fetchFn })
    await client.connect(transport)
    return {
      era,
      callTool: async (name, args, meta) => {
        const params = { name, arguments: args, ...(meta !== undefined && { _meta: meta }) }
        try {
          return (await client.callTool(params)) as CallResult
        } catch (error) {
          // The v1 client (1.32.2) validates structuredContent against outputSchema even when isError is true, so an
          // error envelope throws there. Re-read that one call unvalidated, and accept it only if it is an error.
          if (!(error instanceof Error) || !error.message.includes("does not match the tool's output schema"))
            throw error
          const raw = (await client.request({ method: 'tools/call', params }, CallToolResultSchemaV1)) as CallResult
          if (raw.isError !== true) throw error
          return raw
        }
      },
      listTools: async () => (await client.listTools()).tools as never,
      close: async () => {
        await transport.terminateSession().catch(() => {})
        await client.close()
      },
    }
  }
  const client = new Client(
    { name: 'tollgate-test-v2', version: '0.0.1' },
    {
      jsonSchemaValidator: new AjvV2(createContractAjv() as never),
      ...(era === 'modern' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
    },
  )
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: fetchFn })
  await client.connect(transport)
  return {
    era,
    protocolEra: client.getProtocolEra?.(),
    callTool: async (name, args, meta) =>
      (await client.callTool({ name, arguments: args, ...(meta !== undefined && { _meta: meta }) })) as CallResult,
    listTools: async () => (await client.listTools()).tools as never,
    close: async () => {
      await transport.terminateSession().catch(() => {})
      await client.close()
    },
  }
}

/** One platform-style attempt: connect, one call, close. */
export async function attempt(
  url: string,
  era: Era,
  name: string,
  args: Record<string, unknown>,
  signing: SigningOptions = {},
) {
  const c = await connect(url, era, signing)
  try {
    return await c.callTool(name, args)
  } finally {
    await c.close()
  }
}

export interface TestProvider extends RunningProvider {
  dir: string
  dbFile: string
  stop(): Promise<void>
}

/**
 * A provider on 127.0.0.1:0 over a SQLite file in a fresh temp dir (kept until stop()), on the demo ledger
 * (`demoLedger: {}`) unless `billing` or `demoLedger` is given. Tests of the billing refusals call startProvider.
 */
export async function startTestProvider(options: Partial<ProviderOptions> = {}, dir?: string): Promise<TestProvider> {
  const where = dir ?? mkdtempSync(join(tmpdir(), 'tollgate-provider-'))
  const dbFile = join(where, 'provider.sqlite')
  const demo = options.billing === undefined && options.demoLedger === undefined
  let p: RunningProvider
  try {
    p = await startProvider({
      secrets: [SECRET],
      logger: false,
      store: { kind: 'sqlite', file: dbFile },
      ...(demo && { demoLedger: {} }),
      ...options,
    })
  } catch (error) {
    if (dir === undefined) rmSync(where, { recursive: true, force: true })
    throw error
  }
  return {
    ...p,
    dir: where,
    dbFile,
    stop: async () => {
      await p.close()
      if (dir === undefined) rmSync(where, { recursive: true, force: true })
    },
  }
}

/** An address at example.com (built at runtime: keeps address-shaped literals out of the source). */
export const mail = (local: string) => `${local}\u0040example.com`

let keySeq = 0
/** A fresh idempotency key shaped like the platform's. */
export function newKey(kind = 'refund'): string {
  keySeq++
  return `0199a3c1-0a0b-7c0d-8e0f-101112131415:ticket:${process.pid}-${Date.now()}-${keySeq}:${kind}:${Math.random().toString(16).slice(2)}`
}

/** A BillingPort that forwards every call to `inner` (methods bound) except the overridden ones. */
export function delegateBilling(inner: BillingPort, overrides: Partial<BillingPort>): BillingPort {
  const out: Record<string, unknown> = {}
  let proto: object | null = inner
  while (proto !== null && proto !== Object.prototype) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const v = (inner as unknown as Record<string, unknown>)[name]
      if (name !== 'constructor' && typeof v === 'function' && !(name in out)) out[name] = v.bind(inner)
    }
    proto = Object.getPrototypeOf(proto)
  }
  return Object.assign(out, overrides) as unknown as BillingPort
}

/** The demo ledger (seeded) on a SQLite file of its own, and a BillingPort over it with some methods replaced. */
export interface DemoBilling {
  ledger: DemoLedger
  billing: BillingPort
  /** Closes the ledger's store and removes its folder. */
  dispose(): Promise<void>
}

export async function demoBilling(
  overrides: (ledger: DemoLedger) => Partial<BillingPort> = () => ({}),
): Promise<DemoBilling> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-demo-billing-'))
  const store = openSqliteStore(join(dir, 'ledger.sqlite'))
  const ledger = new DemoLedger(demoLedgerStore(store))
  await ledger.seed()
  return {
    ledger,
    billing: delegateBilling(ledger, overrides(ledger)),
    async dispose() {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** sr_describe of a billing system with refunds only: no subscriptions, cancellations, callbacks or payment attempts. */
export const REFUNDS_ONLY: Pick<BillingPort, 'describe'> = {
  describe: async () => ({
    contract_version: '1.0',
    currencies: ['USD'],
    refunds_to_original_payment_method: true,
    capabilities: {
      partial_refunds: true,
      cancel_subscription: false,
      cancel_at_period_end: false,
      outcome_callbacks: false,
      payment_attempts: false,
    },
  }),
}

/** One hand-written request, signed as the platform signs it (extra headers win over the defaults). */
export async function signedSend(url: string, method: string, body: string, headers: Record<string, string> = {}) {
  const u = new URL(url)
  const res = await fetch(url, {
    method,
    ...(body !== '' && { body }),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
      ...signHeaders(SECRET, { method, host: u.host, path: u.pathname, body: Buffer.from(body), key: '' }),
    },
  })
  return {
    status: res.status,
    session: res.headers.get('mcp-session-id'),
    type: res.headers.get('content-type'),
    text: await res.text(),
  }
}
