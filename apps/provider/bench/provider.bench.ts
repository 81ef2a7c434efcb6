// npm run bench -w apps/provider: signed sr_get_transaction and sr_refund (fresh keys) at concurrency 16, as
// 2026-07-28 single-request calls and as legacy 4-request attempts (initialize, initialized, tools/call, DELETE),
// each against (a) the bare per-request SDK v2 server and (b) a raw node:http HMAC-only server (the floor), all in
// this run. Loopback only; each scenario is bounded by a call count and a time limit.
import { type ChildProcess, spawn } from 'node:child_process'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { signHeaders } from '@tollgate/signing'

const SECRET = 'srmps_bench_0123456789abcdef0123456789abcdef'
const CONCURRENCY = 16
// Per round (3 rounds per scenario and server).
const MAX_CALLS = Number(process.env.BENCH_CALLS ?? 2000)
const MAX_MS = Number(process.env.BENCH_MS ?? 4000)
const WARMUP = 300
const APP = fileURLToPath(new URL('..', import.meta.url))

// The provider runs twice: SQLite synchronous=FULL (power-loss, the default) and NORMAL (process-crash).
type Kind = 'provider' | 'provider-pc' | 'bare' | 'v1' | 'raw'
const isProvider = (k: Kind) => k === 'provider' || k === 'provider-pc'

async function startServer(kind: Kind): Promise<{ url: string; child: ChildProcess }> {
  const args = [
    ...(process.env.BENCH_PROF === kind
      ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROF_DIR ?? join(tmpdir(), 'tollgate-provider-prof')]
      : []),
    '--conditions=@tollgate/source',
    '--import',
    'tsx',
    'bench/servers.ts',
    ...(kind === 'provider'
      ? ['provider', 'power-loss']
      : kind === 'provider-pc'
        ? ['provider', 'process-crash']
        : kind === 'v1'
          ? ['v1-sessionful']
          : [kind]),
  ]
  const child = spawn(process.execPath, args, { cwd: APP, stdio: ['ignore', 'pipe', 'inherit'] })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString()
      const m = /READY (\S+)/.exec(out)
      if (m?.[1] !== undefined) resolve(m[1])
    })
    child.once('exit', (code) => reject(new Error(`${kind} server exited ${code}`)))
  })
  return { url, child }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })

interface Reply {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

function send(url: URL, method: string, body: string, headers: Record<string, string>): Promise<Reply> {
  const signed = signHeaders(SECRET, { method, host: url.host, path: url.pathname, body: Buffer.from(body), key: '' })
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: { ...headers, ...signed, ...(body !== '' && { 'content-length': Buffer.byteLength(body) }) },
      },
      (res) => {
        let data = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          data += c
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

let seq = 0
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
}
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

type Tool = 'read' | 'refund'
function toolCall(kind: Kind, tool: Tool): { name: string; args: Record<string, unknown> } {
  if (kind === 'bare' || kind === 'v1') return { name: 'noop', args: {} }
  if (tool === 'read') return { name: 'sr_get_transaction', args: { transaction_ref: 'ch_1001' } }
  return {
    name: 'sr_refund',
    args: {
      idempotency_key: `bench-${process.pid}-${++seq}`,
      request: {
        transaction_ref: `ch_9${100 + (seq % 256)}`,
        amount: { amount_minor: 1, currency: 'USD' },
        reason: 'goodwill',
        dry_run: false,
      },
    },
  }
}

function check(kind: Kind, r: Reply, expect: number, what: string) {
  // The floor answers 200 to everything it verified.
  if (kind === 'raw') expect = 200
  if (r.status !== expect) throw new Error(`${kind} ${what}: HTTP ${r.status} ${r.body.slice(0, 200)}`)
  if (isProvider(kind) && what === 'tools/call' && !r.body.includes('"structuredContent"')) {
    throw new Error(`${kind} tools/call: no structuredContent ${r.body.slice(0, 200)}`)
  }
  if (isProvider(kind) && what === 'tools/call' && r.body.includes('"isError":true')) {
    throw new Error(`${kind} tools/call: error ${r.body.slice(0, 300)}`)
  }
}

async function modernCall(kind: Kind, url: URL, tool: Tool) {
  const { name, args } = toolCall(kind, tool)
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: ++seq,
    method: 'tools/call',
    params: { name, arguments: args, _meta: ENVELOPE },
  })
  const r = await send(url, 'POST', body, {
    ...JSON_HEADERS,
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': name,
  })
  check(kind, r, 200, 'tools/call')
}

async function legacyAttempt(kind: Kind, url: URL, tool: Tool) {
  const init = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  })
  const r1 = await send(url, 'POST', init, JSON_HEADERS)
  check(kind, r1, 200, 'initialize')
  const session = r1.headers['mcp-session-id']
  const sh: Record<string, string> = {
    ...JSON_HEADERS,
    'mcp-protocol-version': '2025-11-25',
    ...(typeof session === 'string' && { 'mcp-session-id': session }),
  }
  const r2 = await send(url, 'POST', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), sh)
  check(kind, r2, 202, 'initialized')
  const { name, args } = toolCall(kind, tool)
  const r3 = await send(
    url,
    'POST',
    JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } }),
    sh,
  )
  check(kind, r3, 200, 'tools/call')
  const r4 = await send(url, 'DELETE', '', sh)
  check(kind, r4, typeof session === 'string' ? 200 : kind === 'raw' ? 200 : 405, 'DELETE')
}

interface Result {
  perSecond: number
  p99Ms: number
  count: number
}

async function run(fn: () => Promise<void>): Promise<Result> {
  for (let i = 0; i < WARMUP; i += CONCURRENCY) await Promise.all(Array.from({ length: CONCURRENCY }, fn))
  const latencies: number[] = []
  const started = performance.now()
  let issued = 0
  const worker = async () => {
    while (issued < MAX_CALLS && performance.now() - started < MAX_MS) {
      issued++
      const t0 = performance.now()
      await fn()
      latencies.push(performance.now() - t0)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const elapsed = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return {
    perSecond: latencies.length / elapsed,
    p99Ms: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0,
    count: latencies.length,
  }
}

const scenarios = [
  { name: 'modern sr_get_transaction', era: 'modern', tool: 'read' },
  { name: 'modern sr_refund (fresh keys)', era: 'modern', tool: 'refund' },
  { name: 'legacy attempt sr_get_transaction', era: 'legacy', tool: 'read' },
  { name: 'legacy attempt sr_refund (fresh keys)', era: 'legacy', tool: 'refund' },
] as const

// All servers run at once (idle when not loaded). Every scenario alternates all of them in rounds — the baselines
// too, with their no-op call of the same request shape — and keeps each server's median round, so a ratio compares
// figures taken in the same minutes of a shared machine.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const KINDS: Kind[] = ['raw', 'bare', 'v1', 'provider', 'provider-pc']
/**
 * The peer each era is compared with: for 2026-07-28 the bare per-request SDK v2 server; for 2025-era attempts the
 * official SDK v1's own sessionful server (a stateless peer, whose DELETE is a 405, would flatter the ratio).
 */
const peerOf = (era: 'modern' | 'legacy'): Kind => (era === 'legacy' ? 'v1' : 'bare')
const kindsFor = (era: 'modern' | 'legacy'): Kind[] => KINDS.filter((k) => k !== (era === 'legacy' ? 'bare' : 'v1'))
const servers = new Map<Kind, { url: string; child: ChildProcess }>()
for (const kind of KINDS) servers.set(kind, await startServer(kind))
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0
const results: Record<string, Partial<Record<Kind, Result>>> = {}
// Per scenario and provider kind: the median over rounds of (provider ÷ baseline in the same round).
const ratios: Record<string, Partial<Record<Kind, { bare: number; raw: number; range: [number, number] }>>> = {}
try {
  for (const s of scenarios) {
    if (process.env.BENCH_ONLY !== undefined && !s.name.includes(process.env.BENCH_ONLY)) continue
    const rounds = new Map<Kind, Result[]>()
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the order each round so no server always runs first (or right after the same neighbour).
      const kinds = kindsFor(s.era)
      const order = kinds.map((_, i) => kinds[(i + round) % kinds.length] as Kind)
      for (const kind of order) {
        const u = new URL(servers.get(kind)?.url as string)
        const r = await run(() => (s.era === 'modern' ? modernCall(kind, u, s.tool) : legacyAttempt(kind, u, s.tool)))
        rounds.set(kind, [...(rounds.get(kind) ?? []), r])
      }
    }
    const row: Partial<Record<Kind, Result>> = {}
    for (const [kind, rs] of rounds) {
      row[kind] = {
        perSecond: median(rs.map((r) => r.perSecond)),
        p99Ms: median(rs.map((r) => r.p99Ms)),
        count: rs.reduce((n, r) => n + r.count, 0),
      }
    }
    results[s.name] = row
    const roundRatios = (kind: Kind, base: Kind) =>
      (rounds.get(kind) ?? []).map((r, i) => r.perSecond / ((rounds.get(base) ?? [])[i]?.perSecond ?? NaN))
    const perRound = (kind: Kind, base: Kind) => median(roundRatios(kind, base))
    ratios[s.name] = {}
    for (const kind of ['provider', 'provider-pc'] as const) {
      if (rounds.has(kind))
        (ratios[s.name] as Record<string, unknown>)[kind] = {
          bare: perRound(kind, peerOf(s.era)),
          raw: perRound(kind, 'raw'),
          range: [Math.min(...roundRatios(kind, peerOf(s.era))), Math.max(...roundRatios(kind, peerOf(s.era)))],
        }
    }
  }
} finally {
  for (const { child } of servers.values()) {
    child.kill('SIGINT')
    await new Promise((r) => child.once('exit', r))
  }
}

const fmt = (r: Result) => `${r.perSecond.toFixed(0).padStart(6)}/s p99 ${r.p99Ms.toFixed(1).padStart(6)} ms`
console.log(
  `concurrency ${CONCURRENCY}, ${ROUNDS} alternating rounds of ≤${MAX_CALLS} calls or ${MAX_MS} ms per server and scenario (median round), loopback, signed`,
)
console.log('unit: calls/s for modern single requests, attempts/s (4 requests each) for legacy')
console.log('provider = SQLite durability power-loss (synchronous=FULL, default); provider-pc = process-crash (NORMAL)')
console.log(
  "×peer, ×raw: median over rounds of the ratio within one round (figures: each server's median round); peer = bare SDK v2 (modern), SDK v1 sessionful server (legacy)",
)
for (const s of scenarios) {
  const row = results[s.name]
  const peer = row?.[peerOf(s.era)]
  if (peer === undefined || row?.raw === undefined) continue
  const peerName = s.era === 'legacy' ? 'SDK v1 sessionful' : 'bare SDK'
  console.log(`${s.name}: ${peerName} ${fmt(peer)} | raw HMAC ${fmt(row.raw)}`)
  for (const kind of ['provider', 'provider-pc'] as const) {
    const mine = row[kind]
    const ratio = ratios[s.name]?.[kind]
    if (mine === undefined || ratio === undefined) continue
    console.log(
      `  ${kind.padEnd(12)} ${fmt(mine)} | ×peer ${ratio.bare.toFixed(2)} [${ratio.range[0].toFixed(2)}–${ratio.range[1].toFixed(2)}] ×raw ${ratio.raw.toFixed(2)}`,
    )
  }
}
agent.destroy()
