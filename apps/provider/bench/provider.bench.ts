// npm run bench -w apps/provider: signed sr_get_transaction and sr_refund (fresh keys) at concurrency 16, as
// 2026-07-28 single-request calls and as legacy 4-request attempts (initialize, initialized, tools/call, DELETE),
// each against (a) the bare per-request SDK v2 server and (b) a raw node:http HMAC-only server (the floor), all in
// this run. Loopback only; every leg is a closed loop of 16 connections for a fixed time (BENCH_MS), driven by a load
// process of its own (bench/load-process.ts).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchBundle } from '../../../scripts/bench-bundle.mjs'
import {
  type AnswerChecks,
  answerProblem,
  type BenchTool,
  JSON_HEADERS,
  LEGACY_INITIALIZE,
  LEGACY_INITIALIZED,
  legacyCallBody,
  legacySessionHeaders,
  modernCallRequest,
  type ProviderTool,
  platformKey,
  refundRequest,
} from './calls.js'
import type { LoadLeg, LoadResult, LoadSpec } from './load-process.js'
import { type Reply, signedSender } from './signed-send.js'

const SECRET = 'srmps_bench_0123456789abcdef0123456789abcdef'
const CONCURRENCY = 16
// Per round and server: MAX_MS ms (whole seconds for the load process); the in-process client (BENCH_CLIENT=node-http)
// stops at MAX_CALLS calls too (rounds of a fast server shorter than ~1 s swung with whatever else the machine did for
// a moment, so the cap is high enough for ~2 s rounds at 3 000 calls/s).
const MAX_CALLS = Number(process.env.BENCH_CALLS ?? 6000)
const MAX_MS = Number(process.env.BENCH_MS ?? 4000)
const WARMUP = 300
/**
 * The load client. By default every leg runs in a load process of its own (bench/load-process.ts: autocannon, every
 * request built, signed and checked as it is sent). BENCH_CLIENT=node-http drives the MCP and REST-refund legs from
 * this process with node:http instead, as the bench did until 2026-12-02 (with it, the same servers spent 17–55% more
 * CPU per refund, mostly because its MAX_CALLS cap made rounds ~2 s long: bench/RESULTS.md, "The load client").
 */
const IN_PROCESS_CLIENT = process.env.BENCH_CLIENT === 'node-http'
const APP = fileURLToPath(new URL('..', import.meta.url))

// The provider runs on SQLite synchronous=FULL (power-loss, the default) and NORMAL (process-crash), and on
// PostgreSQL (provider-pg) when BENCH_PG_URL (default the tests' database) answers. BENCH_PG_BASE_DIST=<a copy of an
// earlier build's dist/, inside this package so its imports resolve> adds provider-pg-base: that build on PostgreSQL,
// alternated with the others in the same rounds (a before/after comparison on the same minutes of the machine).
// BENCH_ADMIN=1 adds provider-pc-admin: provider-pc with its admin port on (metrics counted on every call, scraped
// once a round as Prometheus would), alternated with provider-pc in the same rounds: what metrics cost (issue 25: at
// most 3% of calls/s by the median). process-crash, so that fsync does not hide a CPU cost. BENCH_ADMIN=only and
// BENCH_ADMIN=paired run just those two (see KINDS).
type Kind =
  | 'provider'
  | 'provider-pc'
  | 'provider-pc-admin'
  | 'provider-pg'
  | 'provider-pg-base'
  | 'provider-pc-before'
  | 'bare'
  | 'v1'
  | 'raw'
const PROVIDER_KINDS = [
  'provider',
  'provider-pc',
  'provider-pc-admin',
  'provider-pg',
  'provider-pg-base',
  'provider-pc-before',
] as const
const PG_BASE_DIST = process.env.BENCH_PG_BASE_DIST
// BENCH_BEFORE_DIST=<another checkout's apps/provider/dist, its own node_modules beside it>: a before/after run.
// provider-pc-before is that build (its libraries its checkout's own), paired with provider-pc as BENCH_ADMIN=paired
// pairs the metrics: both loaded at once, a fresh pair each round; reported as this build ÷ that one.
const BEFORE_DIST = process.env.BENCH_BEFORE_DIST
const isProvider = (k: Kind) => (PROVIDER_KINDS as readonly Kind[]).includes(k)
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

async function startServer(kind: Kind): Promise<{ url: string; admin?: string; child: ChildProcess }> {
  const args = [
    ...(process.env.BENCH_PROF === kind
      ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROF_DIR ?? join(tmpdir(), 'tollgate-provider-prof')]
      : []),
    // The servers run the built packages (dist/, as an installed provider does; the bench script builds first), and
    // servers.ts itself compiled, on plain node: no tsx loader thread in a measured process (scripts/bench-bundle.mjs).
    benchBundle(join(APP, 'bench/servers.ts')),
    ...(kind === 'provider'
      ? ['provider', 'power-loss']
      : kind === 'provider-pc' || kind === 'provider-pc-before'
        ? ['provider', 'process-crash']
        : kind === 'provider-pc-admin'
          ? ['provider', 'process-crash', 'admin']
          : kind === 'v1'
            ? ['v1-sessionful']
            : kind === 'provider-pg' || kind === 'provider-pg-base'
              ? ['provider-pg', PG_URL]
              : [kind]),
  ]
  const [command, argv] = pinnedToOneCore(process.execPath, args)
  const env =
    kind === 'provider-pg-base'
      ? { ...process.env, BENCH_PROVIDER_DIST: PG_BASE_DIST }
      : kind === 'provider-pc-before'
        ? { ...process.env, BENCH_PROVIDER_DIST: BEFORE_DIST }
        : process.env
  const child = spawn(command, argv, { cwd: APP, env, stdio: ['ignore', 'pipe', 'inherit'] })
  const [url, admin] = await new Promise<[string, string | undefined]>((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString()
      const m = /READY (\S+)(?: ADMIN (\S+))?\n/.exec(out)
      if (m?.[1] !== undefined) resolve([m[1], m[2]])
    })
    child.once('exit', (code) => reject(new Error(`${kind} server exited ${code}`)))
  })
  return { url, ...(admin !== undefined && { admin }), child }
}

// Every server runs pinned to the last core (taskset, when installed), the load client (this process) on the others:
// the servers compare on equal CPU, and the client never competes with the server it measures.
const SERVER_CORE = String(cpus().length - 1)
const HAS_TASKSET = spawnSync('taskset', ['-c', '0', 'true']).status === 0
function pinnedToOneCore(command: string, args: string[]): [string, string[]] {
  return HAS_TASKSET ? ['taskset', ['-c', SERVER_CORE, command, ...args]] : [command, args]
}
if (HAS_TASKSET && cpus().length > 1) {
  const others = cpus().length > 2 ? `0-${cpus().length - 2}` : '0'
  spawnSync('taskset', ['-pc', others, String(process.pid)])
}

/** PostgreSQL reachable at PG_URL? (The provider-pg leg runs only then.) */
async function postgresAnswers(): Promise<boolean> {
  const { default: pg } = await import('pg')
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 })
  try {
    await c.connect()
    await c.query('SELECT 1')
    return true
  } catch {
    return false
  } finally {
    await c.end().catch(() => {})
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })

const send = signedSender(SECRET, agent)

/** The tool a server is called with: the peers have only their no-op. */
const toolOf = (kind: Kind, tool: ProviderTool): BenchTool => (kind === 'bare' || kind === 'v1' ? 'noop' : tool)

/**
 * What the answer to a tools/call must hold, for both clients: a provider's has `structuredContent` and no error, a
 * peer's no-op says ok; the floor's (an empty result) is checked by its status only.
 */
function callAnswerChecks(kind: Kind): AnswerChecks {
  if (kind === 'raw') return {}
  return isProvider(kind)
    ? { bodyIncludes: '"structuredContent"', bodyExcludes: '"isError":true' }
    : { bodyIncludes: '"text":"ok"' }
}

function check(kind: Kind, r: Reply, expect: number, what: string) {
  // The floor answers 200 to everything it verified.
  if (kind === 'raw') expect = 200
  if (r.status !== expect) throw new Error(`${kind} ${what}: HTTP ${r.status} ${r.body.slice(0, 200)}`)
  if (what !== 'tools/call') return
  const problem = answerProblem(r.body, callAnswerChecks(kind))
  if (problem !== undefined) throw new Error(`${kind} tools/call: ${problem} ${r.body.slice(0, 300)}`)
}

async function modernCall(kind: Kind, url: URL, tool: ProviderTool) {
  const { body, headers } = modernCallRequest(toolOf(kind, tool))
  check(kind, await send(url, 'POST', body, headers), 200, 'tools/call')
}

async function legacyAttempt(kind: Kind, url: URL, tool: ProviderTool) {
  const r1 = await send(url, 'POST', LEGACY_INITIALIZE, JSON_HEADERS)
  check(kind, r1, 200, 'initialize')
  const session = r1.headers['mcp-session-id']
  const sh = legacySessionHeaders(typeof session === 'string' ? session : undefined)
  check(kind, await send(url, 'POST', LEGACY_INITIALIZED, sh), 202, 'initialized')
  check(kind, await send(url, 'POST', legacyCallBody(toolOf(kind, tool)), sh), 200, 'tools/call')
  check(kind, await send(url, 'DELETE', '', sh), deleteStatusOf(kind), 'DELETE')
}

/** What a 2025-era attempt's DELETE gets: 200 from a server with sessions (and the floor), 405 from one without. */
const deleteStatusOf = (kind: Kind) => (kind === 'bare' ? 405 : 200)

interface Result {
  perSecond: number
  p99Ms: number
  count: number
  /** The load client's CPU over the run's wall time; near 1 means the client, not the server, set the pace. */
  clientCpuShare?: number
  /** The server process's CPU seconds and the wall seconds over the measured run (warm-up excluded). */
  server?: { cpuSeconds: number; wallSeconds: number }
}

/** Brackets a measured run: read the server's CPU and the clock at its start, and again at its end. */
function serverWindow(kind: Kind) {
  const cpu0 = serverCpuSeconds(kind)
  const t0 = performance.now()
  return (): Result['server'] => {
    const cpu1 = serverCpuSeconds(kind)
    if (cpu0 === undefined || cpu1 === undefined) return undefined
    return { cpuSeconds: cpu1 - cpu0, wallSeconds: (performance.now() - t0) / 1000 }
  }
}

async function run(kind: Kind, fn: () => Promise<void>): Promise<Result> {
  for (let i = 0; i < WARMUP; i += CONCURRENCY) await Promise.all(Array.from({ length: CONCURRENCY }, fn))
  const window = serverWindow(kind)
  const latencies: number[] = []
  const cpu0 = process.cpuUsage()
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
  const server = window()
  const elapsed = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpu0)
  latencies.sort((a, b) => a - b)
  return {
    perSecond: latencies.length / elapsed,
    p99Ms: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0,
    count: latencies.length,
    clientCpuShare: (cpu.user + cpu.system) / 1e6 / elapsed,
    ...(server !== undefined && { server }),
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
// BENCH_ADMIN=only: provider-pc and provider-pc-admin alone, alternated (the metrics cost without three other
// servers' rounds in between, so each on/off pair runs in the same few seconds); no peers, no REST legs.
// BENCH_ADMIN=paired: those two loaded at once, sharing the servers' core, each by a load process of its own: the
// machine's slow seconds fall on both sides of a round alike (the scheduler splits the core evenly between two busy
// processes, so the ratio is that of the work each does per call).
const METRICS_PAIRED = process.env.BENCH_ADMIN === 'paired' || BEFORE_DIST !== undefined
const METRICS_ONLY = process.env.BENCH_ADMIN === 'only' || METRICS_PAIRED
/** The kind measured against provider-pc in the paired modes: metrics on, or the build before. */
const PAIRED_KIND: Kind = BEFORE_DIST !== undefined ? 'provider-pc-before' : 'provider-pc-admin'
const KINDS: Kind[] = METRICS_ONLY ? ['provider-pc'] : ['raw', 'bare', 'v1', 'provider', 'provider-pc']
if (process.env.BENCH_ADMIN === '1' || METRICS_ONLY) KINDS.push(PAIRED_KIND)
if (!METRICS_ONLY && process.env.BENCH_PG !== '0' && (await postgresAnswers())) {
  KINDS.push('provider-pg')
  if (PG_BASE_DIST !== undefined) KINDS.push('provider-pg-base')
} else if (!METRICS_ONLY) console.log(`provider-pg: skipped (PostgreSQL not answering at BENCH_PG_URL, or BENCH_PG=0)`)
/**
 * The peer each era is compared with: for 2026-07-28 the bare per-request SDK v2 server; for 2025-era attempts the
 * official SDK v1's own sessionful server (a stateless peer, whose DELETE is a 405, would flatter the ratio).
 */
const peerOf = (era: 'modern' | 'legacy'): Kind => (era === 'legacy' ? 'v1' : 'bare')
const kindsFor = (era: 'modern' | 'legacy'): Kind[] => KINDS.filter((k) => k !== (era === 'legacy' ? 'bare' : 'v1'))
const servers = new Map<Kind, { url: string; admin?: string; child: ChildProcess }>()
/** Starts the kinds in this order (their servers stopped first if running). */
async function freshServers(order: readonly Kind[]): Promise<void> {
  await stopServers()
  for (const kind of order) servers.set(kind, await startServer(kind))
}
async function stopServers(): Promise<void> {
  for (const { child } of servers.values()) {
    child.kill('SIGINT')
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r))
  }
  servers.clear()
}
// With BENCH_ADMIN=only|paired the pair is started afresh every round instead, in alternating order: of two processes
// of the same server, the one started first was measurably faster for a whole run (quenchz's metrics bench, 2026-12-04:
// ~4%, as large as the cost measured; the sign followed the start order).
if (!METRICS_ONLY) await freshServers(KINDS)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0
const results: Record<string, Partial<Record<Kind, Result>>> = {}
let restReport: string[] = []
// Server CPU (user + system of the server's process) per scenario and server, over the measured runs: "scenario|kind".
const scenarioCpu: ServerCpu = new Map()
// Per scenario and server: its calls/s in each round, in the order run (which side moved in a low round).
const roundRates: Record<string, Partial<Record<Kind, number[]>>> = {}
// Per scenario, with BENCH_ADMIN=1: provider-pc-admin ÷ provider-pc within each round.
const metricsCost: Record<string, ReturnType<typeof onOff>> = {}
// Per scenario and provider kind: sameRoundRatios against the era's peer.
const ratios: Record<string, Partial<Record<Kind, ReturnType<typeof sameRoundRatios>>>> = {}
try {
  for (const s of scenarios) {
    if (process.env.BENCH_ONLY !== undefined && !s.name.includes(process.env.BENCH_ONLY)) continue
    const rounds = new Map<Kind, Result[]>()
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the order each round so no server always runs first (or right after the same neighbour).
      const kinds = kindsFor(s.era)
      const order = kinds.map((_, i) => kinds[(i + round) % kinds.length] as Kind)
      if (METRICS_ONLY) await freshServers(order)
      const leg = async (kind: Kind) => {
        const u = new URL(servers.get(kind)?.url as string)
        const r = IN_PROCESS_CLIENT
          ? await run(kind, () => (s.era === 'modern' ? modernCall(kind, u, s.tool) : legacyAttempt(kind, u, s.tool)))
          : await runLoadProcess(kind, loadSpec(u, mcpLoad(kind, u, s.era, s.tool)))
        addServerCpu(scenarioCpu, `${s.name}|${kind}`, r)
        rounds.set(kind, [...(rounds.get(kind) ?? []), r])
        const admin = servers.get(kind)?.admin
        // The scrape a Prometheus would make (every 15 s or so in service; here once a round, after the measured run).
        if (admin !== undefined) {
          const res = await fetch(`${admin}/metrics`)
          if (res.status !== 200 || !(await res.text()).includes('tollgate_provider_requests_total'))
            throw new Error(`${kind}: the admin port did not serve the metrics`)
        }
      }
      if (METRICS_PAIRED) await Promise.all(order.map(leg))
      else for (const kind of order) await leg(kind)
    }
    if (rounds.has(PAIRED_KIND)) metricsCost[s.name] = onOff(rounds)
    const row: Partial<Record<Kind, Result>> = {}
    for (const [kind, rs] of rounds) {
      row[kind] = {
        perSecond: median(rs.map((r) => r.perSecond)),
        p99Ms: median(rs.map((r) => r.p99Ms)),
        count: rs.reduce((n, r) => n + r.count, 0),
        clientCpuShare: median(rs.map((r) => r.clientCpuShare ?? Number.NaN)),
      }
    }
    results[s.name] = row
    roundRates[s.name] = Object.fromEntries([...rounds].map(([kind, rs]) => [kind, rs.map((r) => r.perSecond)]))
    ratios[s.name] = {}
    for (const kind of PROVIDER_KINDS) {
      if (rounds.has(kind))
        (ratios[s.name] as Record<string, unknown>)[kind] = sameRoundRatios(rounds, kind, peerOf(s.era))
    }
  }
  if (!METRICS_ONLY) restReport = await restScenarios(process.env.BENCH_ONLY)
} finally {
  await stopServers()
}

/**
 * Metrics on ÷ off within each round (calls/s), and each side's server CPU per call (µs) over the rounds; in a
 * before/after run, this build ÷ the build before ("on" is this build).
 */
function onOff(rounds: Map<Kind, Result[]>) {
  const [on, off] =
    PAIRED_KIND === 'provider-pc-before'
      ? [rounds.get('provider-pc') ?? [], rounds.get('provider-pc-before') ?? []]
      : [rounds.get('provider-pc-admin') ?? [], rounds.get('provider-pc') ?? []]
  const byRound = on.map((r, i) => r.perSecond / (off[i]?.perSecond ?? Number.NaN))
  const cpuPerCall = (rs: Result[]) => {
    const seconds = rs.reduce((n, r) => n + (r.server?.cpuSeconds ?? Number.NaN), 0)
    return (seconds / rs.reduce((n, r) => n + r.count, 0)) * 1e6
  }
  return { median: median(byRound), byRound, cpuOn: cpuPerCall(on), cpuOff: cpuPerCall(off) }
}

/** Per provider kind: the median over rounds of (provider ÷ baseline in the same round), and ×bare's range. */
function sameRoundRatios(rounds: Map<Kind, Result[]>, kind: Kind, peer: Kind) {
  const within = (base: Kind) =>
    (rounds.get(kind) ?? []).map((r, i) => r.perSecond / ((rounds.get(base) ?? [])[i]?.perSecond ?? NaN))
  const bare = within(peer)
  return {
    bare: median(bare),
    raw: median(within('raw')),
    bareRange: [Math.min(...bare), Math.max(...bare)] as [number, number],
    /** Each round's ratio to the peer, in the order run: a target "in every round" is read off these. */
    byRound: bare,
  }
}

// With the load client's CPU share over that round (this process, on the other core): near 100%, the client set the
// pace and the server may be faster than the figure.
const fmt = (r: Result) =>
  `${r.perSecond.toFixed(0).padStart(6)}/s p99 ${r.p99Ms.toFixed(1).padStart(6)} ms client ${((r.clientCpuShare ?? Number.NaN) * 100).toFixed(0)}%${(r.clientCpuShare ?? 0) >= 0.9 ? ' CLIENT-BOUND' : ''}`
console.log(
  `concurrency ${CONCURRENCY}, ${ROUNDS} alternating rounds of ${IN_PROCESS_CLIENT ? `≤${MAX_CALLS} calls or ${MAX_MS} ms` : `${Math.ceil(MAX_MS / 1000)} s`} per server and scenario (median round), loopback, signed; load client: ${IN_PROCESS_CLIENT ? 'node:http in the bench process (BENCH_CLIENT=node-http)' : 'autocannon in a process of its own'}`,
)
console.log('unit: calls/s for modern single requests, attempts/s (4 requests each) for legacy')
console.log(
  'provider = SQLite durability power-loss (default); provider-pc = process-crash; provider-pg = PostgreSQL (synchronous_commit as the server has it for refund outcomes; claims do not wait for the flush)',
)
console.log(`servers ${HAS_TASKSET ? `pinned to core ${SERVER_CORE} (taskset)` : 'not pinned (no taskset)'}`)
console.log(
  "×peer, ×raw: median over rounds of the ratio within one round, [range over rounds] (figures: each server's median round); peer = bare SDK v2 (modern), SDK v1 sessionful server (legacy)",
)
for (const s of scenarios) {
  const row = results[s.name]
  const peer = row?.[peerOf(s.era)]
  if (peer === undefined || row?.raw === undefined) continue
  const peerName = s.era === 'legacy' ? 'SDK v1 sessionful' : 'bare SDK'
  console.log(`${s.name}: ${peerName} ${fmt(peer)} | raw HMAC ${fmt(row.raw)}`)
  for (const kind of PROVIDER_KINDS) {
    const mine = row[kind]
    const ratio = ratios[s.name]?.[kind]
    if (mine === undefined || ratio === undefined) continue
    const [low, high] = ratio.bareRange
    console.log(
      `  ${kind.padEnd(12)} ${fmt(mine)} | ×peer ${ratio.bare.toFixed(2)} [${low.toFixed(2)}–${high.toFixed(2)}] ×raw ${ratio.raw.toFixed(2)} | rounds ${ratio.byRound.map((x) => x.toFixed(2)).join(' ')}`,
    )
  }
  console.log(scenarioCpuLine(s.name, peerOf(s.era)))
  const rates = Object.entries(roundRates[s.name] ?? {}).map(
    ([k, xs]) => `${k} ${xs.map((x) => x.toFixed(0)).join(' ')}`,
  )
  console.log(`  calls/s per round: ${rates.join('; ')}`)
}
for (const line of restReport) console.log(line)
for (const [scenario, cost] of Object.entries(metricsCost)) {
  const [low, high] = [Math.min(...cost.byRound), Math.max(...cost.byRound)]
  console.log(
    `${PAIRED_KIND === 'provider-pc-before' ? 'this build ÷ the build before (provider-pc ÷ provider-pc-before)' : 'metrics on ÷ off (provider-pc-admin ÷ provider-pc)'}, ${scenario}: median ${cost.median.toFixed(3)} [${low.toFixed(3)}–${high.toFixed(3)}], server CPU per call ${cost.cpuOn.toFixed(0)} vs ${cost.cpuOff.toFixed(0)} µs | rounds ${cost.byRound.map((x) => x.toFixed(3)).join(' ')}`,
  )
}
agent.destroy()

// ---- REST binding legs (issue 8 §5) ------------------------------------------------------------------------------
// (1) a signed GET /v1/transactions/{ref} against the bare SDK server's no-op call and the raw HMAC floor answering a
// signed GET; (2) durable REST refunds (POST /v1/refunds, key in Idempotency-Key and in the signature) against the
// same provider's MCP sr_refund path. Same rounds, rotating order, ratio per round; median and range reported.

function sendRest(url: URL, method: string, body: string, key?: string): Promise<Reply> {
  const headers: Record<string, string> = {}
  if (key !== undefined) headers['idempotency-key'] = key
  if (body !== '') headers['content-type'] = 'application/json'
  return send(url, method, body, headers, key)
}

async function restRead(base: URL) {
  const r = await sendRest(new URL('/v1/transactions/ch_1001', base), 'GET', '')
  if (r.status !== 200 || !r.body.startsWith('{"transaction_ref":"ch_1001"'))
    throw new Error(`REST read: HTTP ${r.status} ${r.body.slice(0, 200)}`)
}

async function restRefund(base: URL) {
  const body = JSON.stringify(refundRequest())
  const r = await sendRest(new URL('/v1/refunds', base), 'POST', body, platformKey())
  if (r.status !== 200 || !r.body.includes('"status":"succeeded"'))
    throw new Error(`REST refund: HTTP ${r.status} ${r.body.slice(0, 200)}`)
}

/**
 * A leg is driven by the autocannon load process (`load`), or, with BENCH_CLIENT=node-http, from this process (`fn`);
 * the REST read legs always by the load process: they answer thousands of calls a second.
 */
type RestLeg = { label: string; kind: Kind } & ({ fn: (u: URL) => Promise<void> } | { load: (u: URL) => LoadShape })

/** A load process's leg and checks; loadSpec adds the server, the secret, the concurrency and the duration. */
type LoadShape = Omit<LoadSpec, 'origin' | 'secret' | 'connections' | 'seconds'>
function loadSpec(u: URL, shape: LoadShape): LoadSpec {
  return {
    ...shape,
    origin: u.origin,
    secret: SECRET,
    connections: CONCURRENCY,
    seconds: Math.ceil(MAX_MS / 1000),
    // A server started afresh for the round (BENCH_ADMIN=only|paired) is warmed longer: its JIT starts cold.
    ...(METRICS_ONLY && { warmCalls: 5000 }),
  }
}

/** An MCP scenario's leg for one server, with the checks the in-process client makes too (callAnswerChecks). */
function mcpLoad(kind: Kind, u: URL, era: 'modern' | 'legacy', tool: ProviderTool): LoadShape {
  const t = toolOf(kind, tool)
  const leg: LoadLeg =
    era === 'modern'
      ? { kind: 'modern', path: u.pathname, tool: t }
      : { kind: 'legacy', path: u.pathname, tool: t, deleteStatus: deleteStatusOf(kind) }
  return { leg, ...(kind === 'raw' && { floor: true }), ...callAnswerChecks(kind) }
}

/** One leg's round in the autocannon process (pinned off the servers' core, like this process). */
async function runLoadProcess(kind: Kind, spec: LoadSpec): Promise<Result> {
  // A child inherits this process's affinity: it runs off the servers' core.
  const argv = [benchBundle(join(APP, 'bench/load-process.ts')), JSON.stringify(spec)]
  const child = spawn(process.execPath, argv, { cwd: APP, stdio: ['ignore', 'pipe', 'inherit'] })
  // The load process prints WARM when its warm-up is over and its result when its measured run is: the server's CPU
  // is read at both.
  let out = ''
  let window: (() => Result['server']) | undefined
  let server: Result['server']
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString()
    if (window === undefined && out.includes('WARM\n')) window = serverWindow(kind)
    if (window !== undefined && server === undefined && out.endsWith('}\n')) server = window()
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  if (code !== 0) throw new Error(`load process exited ${code}`)
  const r = JSON.parse(out.slice(out.indexOf('WARM\n') + 5)) as LoadResult
  return {
    perSecond: r.perSecond,
    p99Ms: r.p99Ms,
    count: r.count,
    clientCpuShare: r.clientCpuShare,
    ...(server !== undefined && { server }),
  }
}

// Server CPU seconds (user + system) from /proc, in clock ticks of 10 ms: unlike throughput it barely moves when
// other processes compete for the cores, so CPU per call is the steadier figure on a shared machine.
function serverCpuSeconds(kind: Kind): number | undefined {
  const pid = servers.get(kind)?.child.pid
  if (pid === undefined) return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}

/** Per key: the server's CPU seconds, the calls they served, and the wall seconds between the two readings. */
type ServerCpu = Map<string, { seconds: number; calls: number; wall: number }>

async function restRounds(restCpu: ServerCpu, legs: readonly RestLeg[]): Promise<Map<string, Result[]>> {
  const rounds = new Map<string, Result[]>()
  for (let round = 0; round < ROUNDS; round++) {
    const order = legs.map((_, i) => legs[(i + round) % legs.length] as RestLeg)
    for (const leg of order) {
      const u = new URL(servers.get(leg.kind)?.url as string)
      const result =
        'fn' in leg ? await run(leg.kind, () => leg.fn(u)) : await runLoadProcess(leg.kind, loadSpec(u, leg.load(u)))
      rounds.set(leg.label, [...(rounds.get(leg.label) ?? []), result])
      addServerCpu(restCpu, leg.label, result)
    }
  }
  return rounds
}

/** Adds one measured run's server CPU, calls and wall time under `key` (warm-up excluded). */
function addServerCpu(cpu: ServerCpu, key: string, r: Result) {
  if (r.server === undefined) return
  const c = cpu.get(key) ?? { seconds: 0, calls: 0, wall: 0 }
  cpu.set(key, {
    seconds: c.seconds + r.server.cpuSeconds,
    calls: c.calls + r.count,
    wall: c.wall + r.server.wallSeconds,
  })
}

/**
 * How busy the server's process kept its core while loaded (CPU seconds over wall seconds of the measured runs). Well
 * under 100% at c=16 means the server was waiting for requests: the closed loop of 16 callers, not the server's CPU,
 * set the pace — its ratio understates it against a saturated peer.
 */
function busyShare(cpu: ServerCpu, key: string): string {
  const c = cpu.get(key)
  return c === undefined || c.wall === 0 ? '' : `busy ${((c.seconds / c.wall) * 100).toFixed(0)}%`
}

/** Server CPU µs per call recorded under `key`, or undefined when nothing was recorded. */
function cpuMicrosPerCall(cpu: ServerCpu, key: string): number | undefined {
  const c = cpu.get(key)
  return c === undefined || c.calls === 0 ? undefined : (c.seconds / c.calls) * 1e6
}

/**
 * Server CPU per call of every server in a scenario, and the peer's CPU per call over each provider's (how many times
 * cheaper): steadier than throughput when other processes share the cores. provider-pg's figure is the provider's
 * process only: PostgreSQL's own backends are not counted, so its ratio flatters it.
 */
function scenarioCpuLine(scenario: string, peer: Kind): string {
  const per = (kind: Kind) => cpuMicrosPerCall(scenarioCpu, `${scenario}|${kind}`)
  const base = per(peer)
  const parts = KINDS.filter((k) => per(k) !== undefined).map((k) => {
    const v = per(k) as number
    const vsPeer = isProvider(k) && base !== undefined ? `×peer ${(base / v).toFixed(2)}, ` : ''
    return `${k} ${v.toFixed(0)} µs (${vsPeer}${busyShare(scenarioCpu, `${scenario}|${k}`)})`
  })
  return `  server CPU per call (provider-pg: without PostgreSQL's own): ${parts.join('; ')}`
}

/** Server CPU µs per call of a leg, and a baseline's CPU per call divided by it (how many times cheaper). */
function restCpuFigure(restCpu: ServerCpu, mine: string, bases: readonly string[]): string {
  const per = (label: string) => cpuMicrosPerCall(restCpu, label)
  const m = per(mine)
  if (m === undefined) return ''
  const parts = bases.map((b) => {
    const v = per(b)
    return v === undefined ? '' : ` ${b} ${v.toFixed(0)} µs (${(v / m).toFixed(2)}× mine, ${busyShare(restCpu, b)})`
  })
  return `  server CPU per call: ${mine} ${m.toFixed(0)} µs (${busyShare(restCpu, mine)});${parts.join(';')}`
}

function restRatio(rounds: Map<string, Result[]>, mine: string, base: string): string {
  const rs = (rounds.get(mine) ?? []).map((r, i) => r.perSecond / ((rounds.get(base) ?? [])[i]?.perSecond ?? NaN))
  return `${median(rs).toFixed(2)} [${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)}]`
}

function restFigure(rounds: Map<string, Result[]>, label: string): string {
  const rs = rounds.get(label) ?? []
  const perSecond = median(rs.map((r) => r.perSecond))
  const client = median(rs.map((r) => r.clientCpuShare ?? Number.NaN))
  // The client pacing the run (its core ≥ 90% busy) caps the figure: said so rather than passed off as the server's.
  const clientNote = Number.isNaN(client)
    ? ''
    : ` (client CPU ${(client * 100).toFixed(0)}%${client >= 0.9 ? ', CLIENT-BOUND: the server may be faster' : ''})`
  return `${perSecond.toFixed(0).padStart(6)}/s p99 ${median(rs.map((r) => r.p99Ms))
    .toFixed(1)
    .padStart(6)} ms${clientNote}`
}

// Called from the main run above, before this part of the module has run: no module-level consts here.
async function restScenarios(only: string | undefined): Promise<string[]> {
  const want = (name: string) => only === undefined || name.includes(only)
  const out: string[] = []
  const cpu: ServerCpu = new Map()
  if (want('rest GET /v1/transactions/{ref}')) {
    // Checked once through this process's own client first (status and body), then loaded by autocannon.
    await restRead(new URL(new URL(servers.get('provider')?.url as string).origin))
    await modernCall('bare', new URL(servers.get('bare')?.url as string), 'read')
    await rawGet(new URL(servers.get('raw')?.url as string))
    const reads = await restRounds(cpu, [
      {
        label: 'raw',
        kind: 'raw',
        load: () => ({
          leg: { kind: 'fixed', method: 'GET', path: '/v1/transactions/ch_1001' },
          bodyIncludes: '"result":{}',
        }),
      },
      // The peer's no-op call (a 2026-07-28 tools/call, signed afresh each time).
      {
        label: 'bare',
        kind: 'bare',
        load: (u) => ({ leg: { kind: 'modern', path: u.pathname, tool: 'noop' }, bodyIncludes: '"text":"ok"' }),
      },
      {
        label: 'provider',
        kind: 'provider',
        load: () => ({
          leg: { kind: 'fixed', method: 'GET', path: '/v1/transactions/ch_1001' },
          bodyIncludes: '{"transaction_ref":"ch_1001"',
        }),
      },
    ])
    out.push(
      `rest GET /v1/transactions/{ref}: bare SDK no-op ${restFigure(reads, 'bare')} | raw HMAC GET ${restFigure(reads, 'raw')}`,
      `  provider     ${restFigure(reads, 'provider')} | ×bare ${restRatio(reads, 'provider', 'bare')} ×raw ${restRatio(reads, 'provider', 'raw')}`,
      restCpuFigure(cpu, 'provider', ['bare', 'raw']),
    )
  }
  if (want('rest POST /v1/refunds')) {
    const mcp = (label: string, kind: Kind): RestLeg =>
      IN_PROCESS_CLIENT
        ? { label, kind, fn: (u) => modernCall(kind, u, 'refund') }
        : { label, kind, load: (u) => mcpLoad(kind, u, 'modern', 'refund') }
    const rest = (label: string, kind: Kind): RestLeg =>
      IN_PROCESS_CLIENT
        ? { label, kind, fn: (u) => restRefund(new URL(u.origin)) }
        : { label, kind, load: () => ({ leg: { kind: 'rest-refund' }, bodyIncludes: '"status":"succeeded"' }) }
    const refunds = await restRounds(cpu, [
      mcp('mcp', 'provider'),
      rest('rest', 'provider'),
      mcp('mcp-pc', 'provider-pc'),
      rest('rest-pc', 'provider-pc'),
    ])
    out.push(
      `rest POST /v1/refunds (fresh keys, durable): provider power-loss MCP sr_refund ${restFigure(refunds, 'mcp')}`,
      `  provider     REST ${restFigure(refunds, 'rest')} | ×MCP ${restRatio(refunds, 'rest', 'mcp')}`,
      `  provider-pc  MCP ${restFigure(refunds, 'mcp-pc')} | REST ${restFigure(refunds, 'rest-pc')} | ×MCP ${restRatio(refunds, 'rest-pc', 'mcp-pc')}`,
      restCpuFigure(cpu, 'rest', ['mcp']),
      restCpuFigure(cpu, 'rest-pc', ['mcp-pc']),
    )
  }
  if (out.length > 0)
    out.unshift('REST binding (median round; ratios: median [min–max] over rounds of the per-round ratio)')
  return out
}

// The raw floor answers any signed request 200; restRead's body check does not apply to it.
async function rawGet(u: URL) {
  const r = await sendRest(new URL('/v1/transactions/ch_1001', u.origin), 'GET', '')
  if (r.status !== 200) throw new Error(`raw GET: HTTP ${r.status}`)
}
