// npm run bench:capacity -w apps/provider — what a call costs PostgreSQL, and how far one PostgreSQL carries.
//
// 1. Counts (deterministic): one provider replica (bench/capacity-server.ts, its own process; its billing a merchant's
//    BillingPort outside PostgreSQL, then the demo ledger in PostgreSQL as fakemerchant runs) on a PostgreSQL cluster
//    of the bench's own (initdb in a temp dir, durable defaults: fsync on, synchronous_commit on, full_page_writes on;
//    pg_stat_statements loaded; autovacuum off so that no background work writes WAL between two readings). For each
//    kind of call, BENCH_COUNT_CALLS calls sent by this process, first one at a time, then 16 at once; before and
//    after each set:
//    - round trips: every pg query the replica sends, counted in the replica (capacity-server.ts wraps pg's
//      Client.prototype.query; one query = one round trip), by statement;
//    - statements: pg_stat_statements' calls in the bench database (what the server executed, BEGIN/COMMIT included);
//    - transactions: derived from the replica's statements (an autocommit statement or a BEGIN…COMMIT is one), and
//      checked once against pg_stat_database.xact_commit over the whole counting phase (that view is flushed by the
//      backends at most every ~10 s when idle, hence the two waits of 15 s);
//    - WAL bytes: pg_current_wal_lsn() before and after (nothing else writes to this cluster).
// 2. Load (noisy: this machine has 2 cores shared with other work): two replicas behind HAProxy (round-robin, health
//    checks on /readyz), a closed loop of BENCH_LOAD_CONNECTIONS connections from the autocannon load process
//    (bench/load-process.ts) for BENCH_MS per kind of call: calls/s, p99, and the CPU seconds each part used
//    (PostgreSQL's processes, each replica, HAProxy, the load process; and the whole machine's, other work included).
// BENCH_PG_URL=postgres://… runs on that server instead of a private cluster (a schema of its own): the WAL and
// commit figures are then the whole server's, other users' included.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freeLoopbackPort, startHaproxy } from '@tollgate/test-support'
import pg from 'pg'
import { benchBundle } from '../../../scripts/bench-bundle.mjs'
import { type PrivatePostgres, privatePostgresSkip, startPrivatePostgres } from '../test/private-postgres.js'
import { answerProblem, modernCallRequest, platformKey, refundRequest } from './calls.js'
import type { LoadLeg, LoadResult, LoadSpec } from './load-process.js'
import { signedSender } from './signed-send.js'

const SECRET = 'srmps_bench_0123456789abcdef0123456789abcdef'
const APP = fileURLToPath(new URL('..', import.meta.url))
const COUNT_CALLS = Number(process.env.BENCH_COUNT_CALLS ?? 400)
const LOAD_SECONDS = Math.ceil(Number(process.env.BENCH_MS ?? 10_000) / 1000)
const LOAD_CONNECTIONS = Number(process.env.BENCH_LOAD_CONNECTIONS ?? 32)
const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// ---- PostgreSQL ----------------------------------------------------------------------------------------------------
let cluster: PrivatePostgres | undefined
let serverUrl: string
let adminUrl: string
const DB = 'tollgate_capacity'
type BillingMode = 'demo' | 'port'
const schemaOf = (billing: BillingMode) => `tollgate_capacity_${billing}_${process.pid}`
if (process.env.BENCH_PG_URL !== undefined) {
  serverUrl = process.env.BENCH_PG_URL
  adminUrl = serverUrl
} else {
  if (privatePostgresSkip !== undefined) {
    console.log(`capacity bench: skipped, no private PostgreSQL (${privatePostgresSkip}); set BENCH_PG_URL`)
    process.exit(0)
  }
  cluster = await startPrivatePostgres({
    shared_preload_libraries: 'pg_stat_statements',
    'pg_stat_statements.track_utility': 'on',
    autovacuum: 'off',
    max_connections: '100',
  })
  adminUrl = cluster.url()
  const setup = new pg.Client({ connectionString: adminUrl })
  await setup.connect()
  await setup.query(`CREATE DATABASE ${DB}`)
  await setup.end()
  serverUrl = adminUrl.replace(/\/postgres$/, `/${DB}`)
}
const admin = new pg.Client({ connectionString: adminUrl })
await admin.connect()
await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements').catch(() => {})
const hasStatements = (
  await admin.query("SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'").catch(() => ({ rowCount: 0 }))
).rowCount
const dbName = cluster === undefined ? new URL(serverUrl).pathname.slice(1) : DB

interface DbSnapshot {
  walLsn: bigint
  statements: number
}
async function dbSnapshot(): Promise<DbSnapshot> {
  const lsn = (await admin.query<{ l: string }>('SELECT pg_current_wal_lsn()::text AS l')).rows[0]?.l ?? '0/0'
  const [hi, lo] = lsn.split('/').map((x) => BigInt(`0x${x}`)) as [bigint, bigint]
  let statements = Number.NaN
  if (hasStatements) {
    const r = await admin.query<{ n: string }>(
      'SELECT coalesce(sum(calls), 0)::bigint AS n FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)',
      [dbName],
    )
    statements = Number(r.rows[0]?.n ?? Number.NaN)
  }
  return { walLsn: (hi << 32n) + lo, statements }
}
async function xactCommits(): Promise<number> {
  const r = await admin.query<{ n: string }>(
    'SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = $1',
    [dbName],
  )
  return Number(r.rows[0]?.n ?? Number.NaN)
}

/** CPU seconds (user + system) of the cluster: the postmaster, its reaped children, and every live child. */
function postgresCpuSeconds(): number {
  if (cluster === undefined) return Number.NaN
  const dataPid = postmasterPid()
  if (dataPid === undefined) return Number.NaN
  const own = statFields(dataPid)
  if (own === undefined) return Number.NaN
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const f = statFields(Number(name))
    if (f !== undefined && Number(f[1]) === dataPid) ticks += Number(f[11]) + Number(f[12])
  }
  return ticks / TICKS
}
function postmasterPid(): number | undefined {
  // The private cluster's postmaster: the process listening on its port is the one whose command line names it.
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0')
      if (cmd[0]?.endsWith('/postgres') && cmd.includes(String(cluster?.port))) return Number(name)
    } catch {}
  }
  return undefined
}
/** /proc/<pid>/stat from field 3 on (state, ppid, …); [11], [12] are utime, stime; [13], [14] the reaped children's. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}
const processCpuSeconds = (pid: number | undefined) => {
  const f = pid === undefined ? undefined : statFields(pid)
  return f === undefined ? Number.NaN : (Number(f[11]) + Number(f[12])) / TICKS
}
/** The whole machine's busy CPU seconds so far (every process, other sessions' included), from /proc/stat. */
function machineBusySeconds(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? []
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu
  return (user + nice + system + irq + softirq + steal) / TICKS
}

// ---- replicas ------------------------------------------------------------------------------------------------------
interface Replica {
  url: URL
  child: ChildProcess
  /** The replica's statement counts since it started (SIGUSR2). */
  counts(): Promise<Counts>
}
interface Counts {
  statements: Record<string, number>
  transactions: number
}
/** billing 'demo': the demo ledger in the same schema (fakemerchant); 'port': a billing system outside PostgreSQL. */
async function startReplica(billing: BillingMode = 'demo'): Promise<Replica> {
  const script = benchBundle(join(APP, 'bench/capacity-server.ts'))
  const child = spawn(process.execPath, [script, serverUrl, schemaOf(billing), billing], {
    cwd: APP,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines: string[] = []
  let waiting: ((l: string) => void) | undefined
  let out = ''
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out += d
    for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
      lines.push(out.slice(0, nl))
      out = out.slice(nl + 1)
    }
    if (waiting !== undefined && lines.length > 0) {
      const w = waiting
      waiting = undefined
      w(lines.shift() as string)
    }
  })
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`capacity server exited ${code}`))),
  )
  exited.catch(() => {})
  const nextLine = () =>
    Promise.race([
      new Promise<string>((resolve) => {
        if (lines.length > 0) resolve(lines.shift() as string)
        else waiting = resolve
      }),
      exited,
    ])
  const ready = await nextLine()
  const m = /^READY (\S+)$/.exec(ready)
  if (m?.[1] === undefined) throw new Error(`capacity server said ${ready}`)
  return {
    url: new URL(m[1]),
    child,
    async counts() {
      const line = nextLine()
      child.kill('SIGUSR2')
      return JSON.parse(await line) as Counts
    },
  }
}
async function stopReplica(r: Replica): Promise<void> {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return
  const gone = new Promise((res) => r.child.once('exit', res))
  r.child.kill('SIGINT')
  await gone
}

// ---- calls sent from this process (counting phase) ----------------------------------------------------------------
type CallKind = 'mcp-refund' | 'rest-refund' | 'mcp-read' | 'rest-read'
const CALL_KINDS: readonly { kind: CallKind; label: string }[] = [
  { kind: 'mcp-refund', label: 'refund, MCP sr_refund (fresh key)' },
  { kind: 'rest-refund', label: 'refund, REST POST /v1/refunds (fresh key)' },
  { kind: 'mcp-read', label: 'read, MCP sr_get_transaction' },
  { kind: 'rest-read', label: 'read, REST GET /v1/transactions/{ref}' },
]
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

const sendSigned = signedSender(SECRET, agent)

async function oneCall(base: URL, kind: CallKind): Promise<void> {
  let r: { status: number; body: string }
  let want: string
  if (kind === 'mcp-refund' || kind === 'mcp-read') {
    const { body, headers } = modernCallRequest(kind === 'mcp-refund' ? 'refund' : 'read')
    r = await sendSigned(base, 'POST', body, headers)
    want = '"structuredContent"'
    if (r.status === 200 && answerProblem(r.body, { bodyIncludes: want, bodyExcludes: '"isError":true' }) !== undefined)
      throw new Error(`${kind}: ${r.body.slice(0, 300)}`)
  } else if (kind === 'rest-refund') {
    const key = platformKey()
    const body = JSON.stringify(refundRequest())
    const headers = { 'content-type': 'application/json', 'idempotency-key': key }
    r = await sendSigned(new URL('/v1/refunds', base), 'POST', body, headers, key)
    want = '"status":"succeeded"'
  } else {
    r = await sendSigned(new URL('/v1/transactions/ch_1001', base), 'GET', '', {})
    want = '"transaction_ref":"ch_1001"'
  }
  if (r.status !== 200 || !r.body.includes(want)) throw new Error(`${kind}: HTTP ${r.status} ${r.body.slice(0, 300)}`)
}

async function callsAtOnce(base: URL, kind: CallKind, calls: number, concurrency: number): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        next++
        await oneCall(base, kind)
      }
    }),
  )
}

interface CountRow {
  billing: BillingMode
  label: string
  concurrency: number
  calls: number
  roundTrips: number
  statements: number
  transactions: number
  walBytes: number
  byStatement: Record<string, number>
}

const diffCounts = (a: Counts, b: Counts): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const [k, v] of Object.entries(b.statements)) {
    const d = v - (a.statements[k] ?? 0)
    if (d !== 0) out[k] = d
  }
  return out
}
const sum = (r: Record<string, number>) => Object.values(r).reduce((n, x) => n + x, 0)

// ---- load through HAProxy -----------------------------------------------------------------------------------------
function haproxyConfig(port: number, replicas: readonly Replica[]): string {
  return [
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout check 1s',
    'frontend provider',
    `  bind 127.0.0.1:${port}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    '  http-reuse always',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    ...replicas.map((r, i) => `  server r${i + 1} ${r.url.host} check inter 1s fall 2 rise 2`),
    '',
  ].join('\n')
}

async function startBalancer(
  replicas: readonly Replica[],
): Promise<{ url: URL; child: ChildProcess; stop(): Promise<void> } | undefined> {
  if (spawnSync('haproxy', ['-v']).status !== 0) return undefined
  const port = await freeLoopbackPort()
  const haproxy = await startHaproxy({ config: haproxyConfig(port, replicas), ports: [port] })
  const url = new URL(`http://127.0.0.1:${port}${replicas[0]?.url.pathname ?? '/mcp'}`)
  // Ready once a read through it is answered by the replicas (HAProxy listening, both checked up).
  for (let i = 0; ; i++) {
    try {
      await oneCall(url, 'rest-read')
      break
    } catch (error) {
      if (haproxy.child.exitCode !== null || i > 200) {
        await haproxy.stop()
        throw error
      }
      await sleep(50)
    }
  }
  return { url, child: haproxy.child, stop: haproxy.stop }
}

async function loadProcess(
  origin: string,
  leg: LoadLeg,
  checks: { bodyIncludes: string },
  onWarm: () => void,
): Promise<LoadResult> {
  const spec: LoadSpec = {
    origin,
    leg,
    secret: SECRET,
    connections: LOAD_CONNECTIONS,
    seconds: LOAD_SECONDS,
    warmCalls: 600,
    ...checks,
  }
  const script = benchBundle(join(APP, 'bench/load-process.ts'))
  const child = spawn(process.execPath, [script, JSON.stringify(spec)], {
    cwd: APP,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  let warm = false
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out += d
    if (!warm && out.includes('WARM\n')) {
      warm = true
      onWarm()
    }
  })
  const code = await new Promise<number | null>((r) => child.once('exit', r))
  if (code !== 0) throw new Error(`load process exited ${code}`)
  return JSON.parse(out.slice(out.indexOf('WARM\n') + 5)) as LoadResult
}

// ---- run -----------------------------------------------------------------------------------------------------------
const countRows: CountRow[] = []
interface LoadRow {
  billing: BillingMode
  label: string
  result: LoadResult
  wall: number
  cpu: { postgres: number; replicas: number[]; haproxy: number; machine: number }
  walBytes: number
  roundTrips: number
  transactions: number
}
const loadRows: LoadRow[] = []
const xactChecks: { billing: BillingMode; derived: number; counted: number }[] = []
const replicas: Replica[] = []
let proxy: Awaited<ReturnType<typeof startBalancer>>
try {
  // The merchant's deployment first (PostgreSQL holds the keys only), then fakemerchant's (the demo ledger in it too),
  // whose replica stays for the load phase.
  for (const billing of ['port', 'demo'] as const) {
    const one = await startReplica(billing)
    replicas.push(one)
    // Warm-up: the JIT, the prepared statements, the tables' first pages.
    for (const { kind } of CALL_KINDS) await callsAtOnce(one.url, kind, 200, 4)
    await sleep(15_000)
    const xact0 = await xactCommits()
    const derived0 = (await one.counts()).transactions
    for (const concurrency of [1, 16]) {
      for (const { kind, label } of CALL_KINDS) {
        const c0 = await one.counts()
        const d0 = await dbSnapshot()
        await callsAtOnce(one.url, kind, COUNT_CALLS, concurrency)
        const d1 = await dbSnapshot()
        const c1 = await one.counts()
        const byStatement = diffCounts(c0, c1)
        countRows.push({
          billing,
          label,
          concurrency,
          calls: COUNT_CALLS,
          roundTrips: sum(byStatement),
          statements: d1.statements - d0.statements,
          transactions: c1.transactions - c0.transactions,
          walBytes: Number(d1.walLsn - d0.walLsn),
          byStatement,
        })
      }
    }
    await sleep(15_000)
    xactChecks.push({
      billing,
      derived: (await one.counts()).transactions - derived0,
      counted: (await xactCommits()) - xact0,
    })
    if (billing === 'port') await stopReplica(replicas.pop() as Replica)
  }

  // Load: fakemerchant's deployment (the demo ledger's replica from the counts and a second one), every kind of call;
  // then the merchant's (two replicas whose billing is outside PostgreSQL), refunds only (its reads never reach it).
  for (const billing of ['demo', 'port'] as const) {
    if (billing === 'port') {
      await proxy?.stop()
      proxy = undefined
      while (replicas.length > 0) await stopReplica(replicas.pop() as Replica)
      replicas.push(await startReplica('port'))
    }
    replicas.push(await startReplica(billing))
    proxy = await startBalancer(replicas)
    if (proxy === undefined) {
      console.log('load phase: skipped, haproxy not installed (apt-get install -y haproxy)')
      break
    }
    const origin = proxy.url.origin
    const path = proxy.url.pathname
    const legs: { label: string; leg: LoadLeg; bodyIncludes: string }[] = [
      {
        label: 'refund, MCP sr_refund',
        leg: { kind: 'modern', path, tool: 'refund' },
        bodyIncludes: '"structuredContent"',
      },
      { label: 'refund, REST POST /v1/refunds', leg: { kind: 'rest-refund' }, bodyIncludes: '"status":"succeeded"' },
      { label: 'read, MCP sr_get_transaction', leg: { kind: 'modern', path, tool: 'read' }, bodyIncludes: '"ch_1001"' },
      {
        label: 'read, REST GET /v1/transactions/{ref}',
        leg: { kind: 'fixed', method: 'GET', path: '/v1/transactions/ch_1001' },
        bodyIncludes: '"transaction_ref":"ch_1001"',
      },
    ]
    for (const leg of billing === 'port' ? legs.filter((l) => l.label.startsWith('refund')) : legs) {
      const running = proxy
      let start: { t: number; pg: number; reps: number[]; hap: number; machine: number; db: DbSnapshot } | undefined
      let counts0: Counts[] = []
      const result = await loadProcess(origin, leg.leg, { bodyIncludes: leg.bodyIncludes }, () => {
        start = {
          t: performance.now(),
          pg: postgresCpuSeconds(),
          reps: replicas.map((r) => processCpuSeconds(r.child.pid)),
          hap: processCpuSeconds(running.child.pid),
          machine: machineBusySeconds(),
          db: { walLsn: 0n, statements: 0 },
        }
        void dbSnapshot().then((d) => {
          if (start !== undefined) start.db = d
        })
        void Promise.all(replicas.map((r) => r.counts())).then((c) => {
          counts0 = c
        })
      })
      const t1 = performance.now()
      const pg1 = postgresCpuSeconds()
      const reps1 = replicas.map((r) => processCpuSeconds(r.child.pid))
      const hap1 = processCpuSeconds(running.child.pid)
      const machine1 = machineBusySeconds()
      const db1 = await dbSnapshot()
      const counts1 = await Promise.all(replicas.map((r) => r.counts()))
      if (start === undefined) throw new Error('the load process never said WARM')
      const s = start
      loadRows.push({
        billing,
        label: leg.label,
        result,
        wall: (t1 - s.t) / 1000,
        cpu: {
          postgres: pg1 - s.pg,
          replicas: reps1.map((x, i) => x - (s.reps[i] ?? Number.NaN)),
          haproxy: hap1 - s.hap,
          machine: machine1 - s.machine,
        },
        walBytes: Number(db1.walLsn - s.db.walLsn),
        roundTrips: counts1.reduce((n, c, i) => n + sum(diffCounts(counts0[i] as Counts, c)), 0),
        transactions: counts1.reduce((n, c, i) => n + c.transactions - (counts0[i]?.transactions ?? 0), 0),
      })
    }
  }
} finally {
  await proxy?.stop()
  for (const r of replicas) await stopReplica(r)
  agent.destroy()
  for (const b of ['demo', 'port'] as const)
    await admin.query(`DROP SCHEMA IF EXISTS ${schemaOf(b)} CASCADE`).catch(() => {})
  await admin.end().catch(() => {})
  await cluster?.dispose()
}

// ---- report --------------------------------------------------------------------------------------------------------
const f1 = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(1))
const f2 = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(2))
console.log(
  `capacity bench: PostgreSQL ${cluster === undefined ? 'at BENCH_PG_URL (WAL and commits: the whole server)' : 'cluster of the bench (fsync on, synchronous_commit on, autovacuum off)'}; ${COUNT_CALLS} calls per row; ${cpus().length} cores`,
)
const BILLING_LABEL: Record<BillingMode, string> = {
  port: "billing: a merchant's BillingPort outside PostgreSQL (PostgreSQL holds the idempotency keys)",
  demo: 'billing: the demo ledger in the same PostgreSQL schema (fakemerchant)',
}
let shown: BillingMode | undefined
for (const r of countRows) {
  if (r.billing !== shown) {
    shown = r.billing
    console.log(BILLING_LABEL[r.billing])
    console.log('per call:            | concurrency | round trips | statements (server) | transactions | WAL bytes')
  }
  console.log(
    `${r.label.padEnd(44)} c=${String(r.concurrency).padEnd(3)} | ${f2(r.roundTrips / r.calls).padStart(6)} | ${f2(r.statements / r.calls).padStart(6)} | ${f2(r.transactions / r.calls).padStart(6)} | ${(r.walBytes / r.calls).toFixed(0).padStart(6)}`,
  )
  const per = Object.entries(r.byStatement)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${f2(v / r.calls)}`)
    .join(', ')
  console.log(`    ${per}`)
}
for (const x of xactChecks)
  console.log(
    `transactions over the counting phase (${x.billing}): derived from the replica's statements ${x.derived}, pg_stat_database.xact_commit ${x.counted}`,
  )
if (loadRows.length > 0) {
  console.log(
    `load: two replicas behind HAProxy, ${LOAD_CONNECTIONS} connections (closed loop, autocannon in a process of its own), ${LOAD_SECONDS} s per row; CPU in cores used (CPU s / wall s); machine = every process on it, other work included`,
  )
  let shownLoad: BillingMode | undefined
  for (const r of loadRows) {
    if (r.billing !== shownLoad) {
      shownLoad = r.billing
      console.log(BILLING_LABEL[r.billing])
    }
    const calls = r.result.count
    const cores = (s: number) => f2(s / r.wall)
    console.log(
      `${r.label.padEnd(40)} ${r.result.perSecond.toFixed(0).padStart(6)} calls/s p99 ${f1(r.result.p99Ms)} ms | PostgreSQL ${cores(r.cpu.postgres)} cores (${f1((r.cpu.postgres / calls) * 1e6)} µs/call) | replicas ${r.cpu.replicas.map(cores).join(' + ')} | haproxy ${cores(r.cpu.haproxy)} | load client ${f2(r.result.clientCpuShare)} | machine ${cores(r.cpu.machine)} of ${cpus().length}`,
    )
    console.log(
      `    per call under load: round trips ${f2(r.roundTrips / calls)}, transactions ${f2(r.transactions / calls)}, WAL ${(r.walBytes / calls).toFixed(0)} B; PostgreSQL's share of the servers' CPU ${((r.cpu.postgres / (r.cpu.postgres + r.cpu.haproxy + r.cpu.replicas.reduce((a, b) => a + b, 0))) * 100).toFixed(0)}%`,
    )
  }
}
