// Bench servers, one per process (argv[2]): 'provider' (this package on a temp SQLite file; argv[3] is its durability,
// 'power-loss' or 'process-crash'; argv[4] 'admin' turns the metrics on), 'bare' (SDK v2 as its
// README shows: createMcpHandler, a new McpServer with one no-op tool per request), 'v1-sessionful' (the official SDK
// v1's own sessionful server, the 2025-era peer a user would pick) and 'raw' (node:http that only
// verifies the HMAC: the floor). Prints "READY <url>" and serves until killed. The provider is imported from dist/
// (the built package, what an installed provider runs), and this file runs compiled, on plain node (no tsx).
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server'
import { SIGNATURE_HEADER, SignatureVerifier, TIMESTAMP_HEADER } from '@tollgate/signing'
import { readStreamBounded } from '@tollgate/strict-json'
import { pino } from 'pino'
import type { startProvider as StartProvider } from '../dist/index.js'

// BENCH_PROVIDER_DIST: another build's dist/ (the bench's provider-pg-base, an earlier build for a same-run comparison).
// A computed specifier, so that the bench bundler (scripts/bench-bundle.mjs) leaves the provider an import of dist/.
const providerEntry =
  process.env.BENCH_PROVIDER_DIST === undefined
    ? new URL('../dist/index.js', import.meta.url).href
    : new URL(`${process.env.BENCH_PROVIDER_DIST.replace(/\/?$/, '/')}index.js`, `file://${process.cwd()}/`).href
const { startProvider } = (await import(providerEntry)) as { startProvider: typeof StartProvider }

export const BENCH_SECRET = 'srmps_bench_0123456789abcdef0123456789abcdef'
const kind = process.argv[2]
// Exit normally on SIGINT so --cpu-prof can write its profile (and temp files are removed).
const cleanups: (() => void)[] = []
process.once('SIGINT', () => {
  for (const c of cleanups) c()
  process.exit(0)
})

function listen(server: ReturnType<typeof createServer>): Promise<string> {
  return new Promise((resolve) => {
    server.keepAliveTimeout = 65_000
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`))
  })
}

if (kind === 'provider') {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const p = await startProvider({
    secrets: [BENCH_SECRET],
    store: {
      kind: 'sqlite',
      file: join(dir, 'bench.sqlite'),
      durability: process.argv[3] === 'process-crash' ? 'process-crash' : 'power-loss',
    },
    // argv[4] 'admin': metrics on (the admin listener on a free port), what an operator scraping it runs.
    ...(process.argv[4] === 'admin' && { adminPort: 0 }),
    demoLedger: {},
    // Real logging (one JSON line per call, asynchronous as the default logger) into /dev/null: the cost is counted.
    logger: pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false })),
  })
  process.stdout.write(`READY ${p.url}${p.adminUrl !== undefined ? ` ADMIN ${p.adminUrl}` : ''}\n`)
} else if (kind === 'provider-pg') {
  await startPostgresProvider(process.argv[3] ?? 'postgres://postgres@127.0.0.1:5432/test')
} else if (kind === 'bare') {
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'bare', version: '1.0.0' })
    server.registerTool('noop', { description: 'does nothing' }, async () => ({
      content: [{ type: 'text', text: 'ok' }],
    }))
    return server
  })
  const node = toNodeHandler(handler)
  process.stdout.write(
    `READY ${await listen(createServer((req, res) => void node(req as Parameters<typeof node>[0], res)))}\n`,
  )
} else if (kind === 'v1-sessionful') {
  process.stdout.write(`READY ${await listen(await v1SessionfulServer())}\n`)
} else if (kind === 'raw') {
  const verifier = new SignatureVerifier({ environment: 'sandbox', secrets: [BENCH_SECRET] })
  const server = createServer(async (req, res) => {
    const body = await readStreamBounded(req, 1024 * 1024)
    const one = (h: string) => {
      const v = req.headers[h.toLowerCase()]
      return Array.isArray(v) ? undefined : v
    }
    const ok = verifier.verify(
      { timestamp: one(TIMESTAMP_HEADER), signature: one(SIGNATURE_HEADER) },
      {
        method: req.method ?? 'GET',
        host: one('host') ?? '',
        path: (req.url ?? '/').split('?')[0] ?? '/',
        body,
        key: '',
      },
    )
    const out = ok.ok ? '{"jsonrpc":"2.0","id":1,"result":{}}' : '{"error":{"code":"credentials_rejected"}}'
    res
      .writeHead(ok.ok ? 200 : 401, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) })
      .end(out)
  })
  process.stdout.write(`READY ${await listen(server)}\n`)
} else {
  process.stderr.write('usage: servers.ts provider|provider-pg|bare|v1-sessionful|raw\n')
  process.exit(2)
}

/**
 * The official SDK v1's sessionful Streamable HTTP server as its README wires it: a sessions map, a new McpServer and
 * StreamableHTTPServerTransport (sessionIdGenerator) per initialize, the stored transport for later requests and
 * DELETE. JSON answers (enableJsonResponse), as the provider's 2025-era leg gives by default. One no-op tool.
 */
async function v1SessionfulServer() {
  const { McpServer: McpServerV1 } = await import('@modelcontextprotocol/sdk/server/mcp.js')
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js')
  const { isInitializeRequest } = await import('@modelcontextprotocol/sdk/types.js')
  const transports = new Map<string, InstanceType<typeof StreamableHTTPServerTransport>>()
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    const body = text === '' ? undefined : JSON.parse(text)
    const sid = req.headers['mcp-session-id']
    let transport = typeof sid === 'string' ? transports.get(sid) : undefined
    if (transport === undefined && sid === undefined && isInitializeRequest(body)) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => {
          transports.set(id, created)
        },
      })
      created.onclose = () => {
        if (created.sessionId !== undefined) transports.delete(created.sessionId)
      }
      const server = new McpServerV1({ name: 'v1-sessionful', version: '1.0.0' })
      server.registerTool('noop', { description: 'does nothing' }, async () => ({
        content: [{ type: 'text', text: 'ok' }],
      }))
      await server.connect(created)
      transport = created
    }
    if (transport === undefined) {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(
          '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}',
        )
      return
    }
    await transport.handleRequest(req, res, body)
  }
  return createServer((req, res) => void handle(req, res))
}

/** This package on PostgreSQL (argv[3]: the URL) in a schema of its own, dropped on SIGINT. */
async function startPostgresProvider(connectionString: string) {
  const schema = `tollgate_bench_${process.pid}`
  const p = await startProvider({
    secrets: [BENCH_SECRET],
    store: { kind: 'postgres', connectionString, schema },
    demoLedger: {},
    logger: pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false })),
  })
  const { default: pg } = await import('pg')
  // Replaces the synchronous SIGINT handler: closing the pool and dropping the schema are asynchronous.
  process.removeAllListeners('SIGINT')
  process.once('SIGINT', () => {
    void (async () => {
      await p.close().catch(() => {})
      const admin = new pg.Client({ connectionString })
      await admin.connect().catch(() => {})
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {})
      await admin.end().catch(() => {})
      process.exit(0)
    })()
  })
  process.stdout.write(`READY ${p.url}\n`)
}
