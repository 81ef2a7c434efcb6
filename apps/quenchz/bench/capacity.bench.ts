// What a call costs the budget's Redis, and how far one Redis carries. Run: npm run bench:capacity -w apps/quenchz
// (also part of npm run bench).
//
// The quenchz CLI itself (bench/support/quenchz-cli.ts) with --budget-redis on a redis-server the bench starts on a
// port of its own (appendonly, fsync on every write: what keeps a charge across a restart), a real issuer's tokens
// (a loopback JWKS, one sub per caller) and a budget that never runs out (--caller-reserve and --budget-pool 10^9),
// over the ECB history file. Every call is a one-month USD rates.window (2026-07-28, one request).
// 1. Counts (deterministic): one replica; CONFIG RESETSTAT, BENCH_COUNT_CALLS calls, INFO commandstats — first from
//    one caller one call at a time, then from 16 callers at once. Commands per call, by command: those the replica
//    sends (EVALSHA …) and those its scripts run inside Redis, which commandstats counts too.
// 2. Load (noisy: the machine has 2 cores shared with other work): two replicas behind HAProxy, 32 callers (closed
//    loops in a load process of their own, bench/support/capacity-load.ts) for BENCH_MS: calls/s, and the CPU each
//    part used (redis-server, each replica, HAProxy, the load process, the whole machine).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freeLoopbackPort, type RunningHaproxy, sharedDir, startHaproxy } from '@tollgate/test-support'
import { Redis } from 'ioredis'
import { benchBundle } from '../../../scripts/bench-bundle.mjs'
import { startJwksServer, TEST_ISSUER } from '../test/server/support/jwks-server.js'
import { ownRedis } from '../test/server/support/own-redis.js'
import { plainCaller } from './support/plain-call.js'

const RESOURCE = 'https://quenchz.invalid/mcp'
const COUNT_CALLS = Number(process.env.BENCH_COUNT_CALLS ?? 400)
const LOAD_SECONDS = Math.ceil(Number(process.env.BENCH_MS ?? 10_000) / 1000)
const LOAD_CALLERS = Number(process.env.BENCH_LOAD_CONNECTIONS ?? 32)
const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100
const ARGS = { currency: 'USD', start: '2026-03-01', end: '2026-03-31' }
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const history = join(sharedDir(), 'data', 'ecb', 'eurofxref-hist.zip')
if (!existsSync(history)) {
  console.log(`capacity.bench: skipped, the ECB history file is absent (${history})`)
  process.exit(0)
}
if (!existsSync('/usr/bin/redis-server')) {
  console.log('capacity.bench: skipped, no redis-server to start')
  process.exit(0)
}

const redisServer = await ownRedis()
await redisServer.start({ empty: true })
const redis = new Redis(redisServer.url)
const jwks = await startJwksServer()
const bundled = (script: string) =>
  benchBundle(fileURLToPath(new URL(script, import.meta.url)), { workspaceSources: true })

interface Replica {
  url: string
  child: ChildProcess
}
async function startReplica(): Promise<Replica> {
  const args = [
    ...['--port', '0', '--log-level', 'warn'],
    ...['--jwks-url', jwks.url, '--issuer', TEST_ISSUER],
    ...['--source', 'history', '--history', history],
    ...['--budget-redis', redisServer.url, '--caller-reserve', '1000000000', '--budget-pool', '1000000000'],
  ]
  const child = spawn(process.execPath, [bundled('./support/quenchz-cli.ts'), ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let err = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      err += d
      const m = /^quenchz listening on (\S+) /m.exec(err)
      if (m?.[1] !== undefined) resolve(m[1])
    })
    child.once('exit', (code) => reject(new Error(`quenchz exited ${code}: ${err.slice(0, 500)}`)))
  })
  // Later lines (warnings) are passed on.
  child.stderr?.removeAllListeners('data')
  child.stderr?.on('data', (d: string) => process.stderr.write(d))
  return { url, child }
}
async function stopReplica(r: Replica) {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return
  const gone = new Promise((res) => r.child.once('exit', res))
  r.child.kill('SIGINT')
  await gone
}

/** Calls per command since the last CONFIG RESETSTAT (INFO commandstats), the bench's own INFO left out. */
async function commandStats(): Promise<Record<string, number>> {
  const info = await redis.info('commandstats')
  const out: Record<string, number> = {}
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const name = m[1] as string
    if (name === 'info' || name === 'config|resetstat') continue
    out[name] = Number(m[2])
  }
  return out
}
/** total_commands_processed since the last CONFIG RESETSTAT (INFO stats). */
async function commandsProcessed(): Promise<number> {
  const m = /^total_commands_processed:(\d+)/m.exec(await redis.info('stats'))
  return Number(m?.[1] ?? Number.NaN)
}
/** total_net_input_bytes since the last CONFIG RESETSTAT (INFO stats): every byte sent to Redis, by anyone. */
async function bytesIn(): Promise<number> {
  const m = /^total_net_input_bytes:(\d+)/m.exec(await redis.info('stats'))
  return Number(m?.[1] ?? Number.NaN)
}

const tokens = await Promise.all(Array.from({ length: LOAD_CALLERS }, (_, i) => jwks.sign(`caller-${i}`, RESOURCE)))

async function callsAtOnce(url: string, callers: number, calls: number) {
  const cs = tokens.slice(0, callers).map((t) => plainCaller(url, t, 1))
  let next = 0
  try {
    await Promise.all(
      cs.map(async ({ call }) => {
        while (next < calls) {
          next++
          await call(ARGS)
        }
      }),
    )
  } finally {
    for (const c of cs) c.close()
  }
}

function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(f[11]) + Number(f[12])) / TICKS
  } catch {
    return Number.NaN
  }
}
function machineBusySeconds(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? []
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu
  return (user + nice + system + irq + softirq + steal) / TICKS
}
const redisPid = () => {
  const m = /^process_id:(\d+)/m.exec(redisInfoServer)
  return m?.[1] === undefined ? undefined : Number(m[1])
}
const redisInfoServer = await redis.info('server')

interface CountRow {
  callers: number
  calls: number
  processed: number
  /** Bytes into Redis (total_net_input_bytes), the bench's own CONFIG RESETSTAT and INFO left out (measured). */
  bytesIn: number
  byCommand: Record<string, number>
}
interface LoadRow {
  calls: number
  seconds: number
  clientCpuShare: number
  cpu: { redis: number; replicas: number[]; haproxy: number; machine: number }
  commands: number
}
const countRows: CountRow[] = []
let loadRow: LoadRow | undefined
const replicas: Replica[] = []
let haproxy: RunningHaproxy | undefined
try {
  replicas.push(await startReplica())
  const one = replicas[0] as Replica
  await callsAtOnce(one.url, 16, 400)
  // What one of the bench's own INFO stats sends (the CONFIG RESETSTAT before it is not counted), to leave out.
  await redis.config('RESETSTAT')
  const ownBytes = await bytesIn()
  for (const callers of [1, 16]) {
    await redis.config('RESETSTAT')
    await callsAtOnce(one.url, callers, COUNT_CALLS)
    const processed = await commandsProcessed()
    const bytes = (await bytesIn()) - 2 * ownBytes
    countRows.push({
      callers,
      calls: COUNT_CALLS,
      processed: processed - 1,
      bytesIn: bytes,
      byCommand: await commandStats(),
    })
  }

  replicas.push(await startReplica())
  if (spawnSync('haproxy', ['-v']).status !== 0) console.log('load phase: skipped, haproxy not installed')
  else {
    const port = await freeLoopbackPort()
    const config = [
      'global',
      '  maxconn 4096',
      'defaults',
      '  mode http',
      '  timeout connect 2s',
      '  timeout client 60s',
      '  timeout server 60s',
      '  timeout check 1s',
      'frontend quenchz',
      `  bind 127.0.0.1:${port}`,
      '  default_backend replicas',
      'backend replicas',
      '  balance roundrobin',
      '  http-reuse always',
      '  option httpchk GET /readyz',
      '  http-check expect status 200',
      ...replicas.map((r, i) => `  server q${i + 1} ${new URL(r.url).host} check inter 1s fall 2 rise 2`),
      '',
    ].join('\n')
    haproxy = await startHaproxy({ config, ports: [port] })
    const url = `http://127.0.0.1:${port}${new URL(one.url).pathname}`
    for (let i = 0; ; i++) {
      try {
        await callsAtOnce(url, 2, 2)
        break
      } catch (error) {
        if (i > 200) throw error
        await sleep(50)
      }
    }
    const load = spawn(
      process.execPath,
      [bundled('./support/capacity-load.ts'), url, '3', String(LOAD_SECONDS), ...tokens],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    let out = ''
    let start: { redis: number; replicas: number[]; haproxy: number; machine: number; commands: number } | undefined
    load.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d
      if (start === undefined && out.includes('WARM\n')) {
        start = {
          redis: cpuSeconds(redisPid()),
          replicas: replicas.map((r) => cpuSeconds(r.child.pid)),
          haproxy: cpuSeconds(haproxy?.child.pid),
          machine: machineBusySeconds(),
          commands: Number.NaN,
        }
        void commandsProcessed().then((n) => {
          if (start !== undefined) start.commands = n
        })
      }
    })
    const code = await new Promise<number | null>((r) => load.once('exit', r))
    if (code !== 0 || start === undefined) throw new Error(`load process exited ${code}`)
    const s = start
    const result = JSON.parse(out.slice(out.indexOf('WARM\n') + 5)) as {
      calls: number
      seconds: number
      cpuShare: number
    }
    loadRow = {
      calls: result.calls,
      seconds: result.seconds,
      clientCpuShare: result.cpuShare,
      cpu: {
        redis: cpuSeconds(redisPid()) - s.redis,
        replicas: replicas.map((r, i) => cpuSeconds(r.child.pid) - (s.replicas[i] ?? Number.NaN)),
        haproxy: cpuSeconds(haproxy.child.pid) - s.haproxy,
        machine: machineBusySeconds() - s.machine,
      },
      commands: (await commandsProcessed()) - s.commands,
    }
  }
} finally {
  await haproxy?.stop()
  for (const r of replicas) await stopReplica(r)
  redis.disconnect()
  await jwks.close()
  await redisServer.dispose()
}

const f2 = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(2))
console.log(
  `capacity.bench: quenchz CLI, --budget-redis on a redis-server of the bench's own (appendonly, appendfsync always), one-month USD rates.window, ${COUNT_CALLS} calls per row; ${cpus().length} cores`,
)
for (const r of countRows) {
  const per = Object.entries(r.byCommand)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${f2(v / r.calls)}`)
    .join(', ')
  console.log(
    `  ${r.callers} caller${r.callers === 1 ? ', one call at a time' : 's at once'}: commands received per call ${f2(r.processed / r.calls)}, bytes into Redis per call ${(r.bytesIn / r.calls).toFixed(0)}; commandstats per call (scripts' own commands included): ${per}`,
  )
}
if (loadRow !== undefined) {
  const r = loadRow
  const cores = (s: number) => f2(s / r.seconds)
  console.log(
    `  load: two replicas behind HAProxy, ${LOAD_CALLERS} callers (closed loops, load process of its own), ${LOAD_SECONDS} s: ${(r.calls / r.seconds).toFixed(0)} calls/s | redis-server ${cores(r.cpu.redis)} cores (${f2((r.cpu.redis / r.calls) * 1e6)} µs/call) | replicas ${r.cpu.replicas.map(cores).join(' + ')} | haproxy ${cores(r.cpu.haproxy)} | load client ${f2(r.clientCpuShare)} | machine ${cores(r.cpu.machine)} of ${cpus().length}`,
  )
  console.log(
    `    commands received per call under load ${f2(r.commands / r.calls)}; Redis's share of the servers' CPU ${((r.cpu.redis / (r.cpu.redis + r.cpu.haproxy + r.cpu.replicas.reduce((a, b) => a + b, 0))) * 100).toFixed(0)}%`,
  )
}
