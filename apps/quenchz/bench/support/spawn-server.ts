// Starts the benches' processes (a server: bench/support/serve.ts; a load client), each pinned to one core with taskset
// when it exists.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { benchBundle } from '../../../../scripts/bench-bundle.mjs'

const SERVE = fileURLToPath(new URL('./serve.ts', import.meta.url))
const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100
// BENCH_PIN=0 leaves every bench process to the OS scheduler (on a machine shared with other work, pinning can hurt).
export const hasTaskset = process.env.BENCH_PIN !== '0' && spawnSync('taskset', ['--version']).status === 0

export interface BenchServer {
  url: string
  tokens: Record<string, string>
  /** The admin listener's URL (metrics), for a server started with one (serve.ts quenchz-admin). */
  admin: string | undefined
  pinned: boolean
  /** CPU time the server process has used so far, ms (user + system, from /proc); undefined where /proc is absent. */
  cpuMs(): number | undefined
  /** Sends SIGUSR2 and resolves with the JSON line the server answers (bench/support/serve.ts). */
  stats(): Promise<unknown>
  stop(): Promise<void>
}

/** A bench process started by {@link spawnBenchProcess}: its stdout as lines, its CPU time, its end. */
export interface BenchProcess {
  child: ChildProcess
  pinned: boolean
  /** The next line the process prints on stdout (lines are kept in order until read). */
  nextLine(): Promise<string>
  /** CPU time the process has used so far, ms (user + system, from /proc); undefined where /proc is absent. */
  cpuMs(): number | undefined
  /** SIGTERM, and resolves once it exited. */
  stop(): Promise<void>
}

/**
 * A bench script and this repository's own sources it imports, compiled into one plain JavaScript file (third-party
 * packages stay imports), so that its process runs on plain node, not under tsx (scripts/bench-bundle.mjs says why).
 */
const bundled = (script: string): string => benchBundle(script, { workspaceSources: true })

/**
 * Runs a TypeScript script of the benches in its own node process (bundled first, see bundled()), pinned to `core`
 * when taskset exists.
 */
export function spawnBenchProcess(
  script: string,
  args: readonly string[],
  core: number,
  nodeFlags: readonly string[] = [],
): BenchProcess {
  const node = [process.execPath, ...nodeFlags, bundled(script), ...args]
  const argv = hasTaskset ? ['taskset', '-c', String(core), ...node] : node
  const child: ChildProcess = spawn(argv[0] as string, argv.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines: string[] = []
  let waiting: ((line: string) => void) | undefined
  let out = ''
  child.stdout?.setEncoding('utf8')
  child.stdout?.on('data', (chunk: string) => {
    out += chunk
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
  let exited: Error | undefined
  let failWaiting: ((error: Error) => void) | undefined
  child.once('exit', (code) => {
    exited = new Error(`bench process ${script} ${args[0] ?? ''} exited ${code}`)
    failWaiting?.(exited)
  })
  return {
    child,
    pinned: hasTaskset,
    nextLine: () =>
      new Promise<string>((resolve, reject) => {
        if (lines.length > 0) return resolve(lines.shift() as string)
        if (exited !== undefined) return reject(exited)
        waiting = resolve
        failWaiting = reject
      }),
    cpuMs() {
      // taskset execs node, so the child's pid is the node process's. Fields 14 and 15 of stat: utime, stime in ticks.
      try {
        const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
        return (Number(fields[11]) + Number(fields[12])) * (1000 / TICKS_PER_SECOND)
      } catch {
        return undefined
      }
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const gone = new Promise<void>((r) => child.once('exit', () => r()))
      child.kill('SIGTERM')
      await gone
    },
  }
}

/**
 * Starts bench/support/serve.ts `kind`; `serveScript` is another checkout's serve.ts for a before/after run (bundled
 * from that checkout's own sources).
 */
export async function spawnServer(kind: string, history: string, core = 0, serveScript = SERVE): Promise<BenchServer> {
  // BENCH_SERVER_NODE_FLAGS: node/V8 flags for the server process only (e.g. to try a GC setting), space-separated.
  const flags = (process.env.BENCH_SERVER_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '')
  const server = spawnBenchProcess(serveScript, [kind, history], core, flags)
  // The first line is {url, tokens}; later ones answer SIGUSR2.
  const { url, tokens, admin } = JSON.parse(await server.nextLine()) as {
    url: string
    tokens: Record<string, string>
    admin?: string
  }
  return {
    url,
    tokens,
    admin,
    pinned: server.pinned,
    cpuMs: server.cpuMs,
    async stats() {
      const answer = server.nextLine()
      server.child.kill('SIGUSR2')
      return JSON.parse(await answer) as unknown
    },
    stop: server.stop,
  }
}

/** The p-th percentile (0..100) of samples, nearest rank. */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank] as number
}

export const median = (xs: readonly number[]) => percentile(xs, 50)
