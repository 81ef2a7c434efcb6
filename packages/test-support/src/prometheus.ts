// Debian's Prometheus tools for the metrics suites: `promtool check metrics` over an exposition, and a real
// `prometheus` scraping a server's admin port (temp config and data dir, a free loopback port, a short scrape
// interval), queried through its HTTP API. Both skip with the reason when the binary is absent, unless
// TOLLGATE_REQUIRE_SERVICES=1 (CI, where .ci/run installs Debian's `prometheus` package): then they fail.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

export const PROMTOOL = process.env.TOLLGATE_PROMTOOL ?? '/usr/bin/promtool'
export const PROMETHEUS = process.env.TOLLGATE_PROMETHEUS ?? '/usr/bin/prometheus'
const INSTALL_HINT = 'apt-get install prometheus'

function binarySkip(path: string, name: string, envVar: string): string | undefined {
  if (existsSync(path) && spawnSync(path, ['--version']).status === 0) return undefined
  const reason = `no working ${name} at ${path} (${INSTALL_HINT}, or set ${envVar})`
  if (process.env.TOLLGATE_REQUIRE_SERVICES === '1') throw new Error(`${reason}, and TOLLGATE_REQUIRE_SERVICES=1`)
  return reason
}

/** Why a promtool suite cannot run here; undefined when it can. Throws instead under TOLLGATE_REQUIRE_SERVICES=1. */
export function probePromtool(): { skip: string | undefined } {
  return { skip: binarySkip(PROMTOOL, 'promtool', 'TOLLGATE_PROMTOOL') }
}

/** Why a Prometheus suite cannot run here; undefined when it can. Throws instead under TOLLGATE_REQUIRE_SERVICES=1. */
export function probePrometheus(): { skip: string | undefined } {
  return { skip: binarySkip(PROMETHEUS, 'prometheus', 'TOLLGATE_PROMETHEUS') }
}

/** `promtool check metrics` over an exposition (stdin): ok, or the problems it printed. */
export function promtoolCheckMetrics(exposition: string): { ok: boolean; output: string } {
  const r = spawnSync(PROMTOOL, ['check', 'metrics'], { input: exposition, encoding: 'utf8' })
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() }
}

/** One sample of a text exposition: its metric name, labels and value. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/** The samples of a Prometheus text exposition (comments skipped; label values unescaped). */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = SAMPLE.exec(line)
    if (m === null) throw new Error(`not an exposition line: ${line.slice(0, 120)}`)
    const labels: Record<string, string> = {}
    for (const [, k, v] of (m[2] ?? '').matchAll(LABEL_PAIR))
      labels[k as string] = (v as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
    out.push({ name: m[1] as string, labels, value: Number(m[3]) })
  }
  return out
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export function sampleSum(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  let sum = 0
  for (const s of samples) {
    if (s.name !== name) continue
    if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value
  }
  return sum
}

/** A free loopback port (bound then released: a small race, acceptable in tests). */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((r) => server.close(() => r()))
  return port
}

export interface ScrapeTarget {
  /** The job label Prometheus gives the target's series. */
  job: string
  /** host:port of the admin listener (Prometheus asks it for /metrics). */
  address: string
}

export interface RunningPrometheus {
  /** http://127.0.0.1:port of Prometheus itself. */
  url: string
  /** An instant query through the HTTP API: the result vector's samples (labels and value). */
  query(promql: string): Promise<{ labels: Record<string, string>; value: number }[]>
  /** The scrape targets as Prometheus sees them (health: up / down / unknown). */
  targets(): Promise<{ job: string; health: string; lastError: string }[]>
  /** Asks `check` until it returns a value other than undefined, or fails after `timeoutMs` with `what`. */
  waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs?: number): Promise<T>
  /** What Prometheus printed (for a failing test's message). */
  log(): string
  stop(): Promise<void>
}

/** The prometheus.yml that scrapes `targets` every `interval`. */
function prometheusConfig(targets: readonly ScrapeTarget[], interval: string): string {
  return [
    'global:',
    `  scrape_interval: ${interval}`,
    `  scrape_timeout: ${interval}`,
    '  evaluation_interval: 1s',
    'scrape_configs:',
    ...targets.flatMap((t) => [
      `  - job_name: ${JSON.stringify(t.job)}`,
      '    static_configs:',
      `      - targets: [${JSON.stringify(t.address)}]`,
    ]),
    '',
  ].join('\n')
}

/** The prometheus process, with the tail of what it printed and whether it has exited. */
interface PrometheusProcess {
  child: ChildProcess
  output(): string
  exited(): boolean
}

function spawnPrometheus(dir: string, configFile: string, port: number): PrometheusProcess {
  let output = ''
  let exited = false
  const child = spawn(
    PROMETHEUS,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-20_000)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  child.once('exit', () => {
    exited = true
  })
  return { child, output: () => output, exited: () => exited }
}

/** Asks `check` every 200 ms until it returns a value, the process exits, or `timeoutMs` passes. */
async function pollUntil<T>(
  prom: PrometheusProcess,
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    if (prom.exited()) throw new Error(`prometheus exited while waiting for ${what}:\n${prom.output()}`)
    try {
      const v = await check()
      if (v !== undefined) return v
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last instanceof Error ? ` (last: ${last.message})` : ''}`)
    await sleep(200)
  }
}

/**
 * Starts Debian's prometheus on a free loopback port, scraping `targets` every `scrapeIntervalMs` (default 500 ms),
 * with its config and TSDB in a temp dir that stop() removes.
 */
export async function startPrometheus(
  targets: readonly ScrapeTarget[],
  options: { scrapeIntervalMs?: number } = {},
): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-prometheus-'))
  const configFile = join(dir, 'prometheus.yml')
  writeFileSync(configFile, prometheusConfig(targets, `${options.scrapeIntervalMs ?? 500}ms`))
  const port = await freeLoopbackPort()
  const url = `http://127.0.0.1:${port}`
  const prometheus = spawnPrometheus(dir, configFile, port)
  const { child } = prometheus
  const api = async (path: string): Promise<unknown> => {
    const r = await fetch(`${url}${path}`)
    const body = (await r.json()) as { status: string; data: unknown; error?: string }
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? r.status}`)
    return body.data
  }
  const running: RunningPrometheus = {
    url,
    async query(promql) {
      const data = (await api(`/api/v1/query?query=${encodeURIComponent(promql)}`)) as {
        result: { metric: Record<string, string>; value: [number, string] }[]
      }
      return data.result.map((r) => ({ labels: r.metric, value: Number(r.value[1]) }))
    },
    async targets() {
      const data = (await api('/api/v1/targets')) as {
        activeTargets: { labels: { job: string }; health: string; lastError: string }[]
      }
      return data.activeTargets.map((t) => ({ job: t.labels.job, health: t.health, lastError: t.lastError }))
    },
    waitFor: (what, check, timeoutMs) => pollUntil(prometheus, what, check, timeoutMs),
    log: () => prometheus.output(),
    async stop() {
      if (!prometheus.exited()) {
        const gone = new Promise((r) => child.once('exit', r))
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
        await gone
        clearTimeout(timer)
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
  try {
    await pollUntil(prometheus, 'prometheus to answer /-/ready', async () => {
      const r = await fetch(`${url}/-/ready`).catch(() => undefined)
      return r?.ok === true ? true : undefined
    })
  } catch (error) {
    await running.stop()
    throw error
  }
  return running
}
