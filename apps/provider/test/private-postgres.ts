// A PostgreSQL cluster of the test's own (initdb in a temporary directory, TCP on a free loopback port), which the
// test may stop, start again, freeze (SIGSTOP) and thaw — never the shared one. initdb and postgres refuse to run as
// root: as root they run as the system's postgres user.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freeLoopbackPort } from '@tollgate/test-support'
import pg from 'pg'

function clusterRunner(): { run: (argv: string[]) => string[]; owner?: number } | string {
  const bin = [
    '/usr/local/bin',
    '/usr/lib/postgresql/17/bin',
    '/usr/lib/postgresql/16/bin',
    '/usr/lib/postgresql/15/bin',
  ]
    .map((d) => join(d, 'initdb'))
    .find(existsSync)
  if (bin === undefined) return 'initdb not installed'
  // /usr/local/bin may link initdb alone: the other programs (pg_basebackup, pg_rewind) are beside its target.
  const dir = join(realpathSync(bin), '..')
  const getuid = process.getuid?.bind(process)
  if (getuid === undefined || getuid() !== 0) return { run: ([cmd, ...args]) => [join(dir, cmd as string), ...args] }
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    return {
      run: ([cmd, ...args]) => ['runuser', '-u', 'postgres', '--', join(dir, cmd as string), ...args],
      owner: uid,
    }
  } catch {
    return 'running as root with no postgres user to run a private cluster'
  }
}

const runner = clusterRunner()
/** Why a private cluster cannot run here (the suite skips), or undefined. */
export const privatePostgresSkip = typeof runner === 'string' ? runner : undefined

export interface PrivatePostgres {
  port: number
  /** postgres://postgres@127.0.0.1:port/postgres, plus `params` (e.g. query_timeout=800&connect_timeout=1). */
  url(params?: string): string
  /** Fast shutdown (SIGINT: every backend ends with 57P01), waiting for the postmaster's exit. */
  stop(): Promise<void>
  /** Starts it again on the same port and data; resolves when it accepts connections. */
  start(): Promise<void>
  /** SIGSTOP the postmaster and every backend: connections are accepted by the kernel, nothing answers. */
  freeze(): void
  thaw(): void
  /** Stops it (thawing first) and removes its directory. */
  dispose(): Promise<void>
}

/** A cluster that is one node of a replicated pair (startReplicatedPostgres). */
export interface ReplicaNode extends PrivatePostgres {
  /** Its data directory (pg_rewind's target). */
  data: string
  /** SIGKILL of the postmaster and every backend at once: the host lost, nothing shut down. */
  crash(): Promise<void>
  /** pg_ctl promote -w: a standby becomes a primary; resolves once it takes writes. */
  promote(): Promise<void>
  /**
   * Turns this (stopped, possibly crashed) former primary into a standby of `primary` (pg_rewind from it, standby.signal
   * and primary_conninfo written) and starts it: what a failover manager does to a demoted primary.
   */
  rejoinAsStandbyOf(primary: ReplicaNode): Promise<void>
}

/**
 * The server settings (`-c name=value`) unless the caller gives its own. fsync off: the suites using the defaults are
 * about outages, not power loss; it keeps the cluster quick on a shared machine.
 */
const OUTAGE_SETTINGS: Readonly<Record<string, string>> = { fsync: 'off', autovacuum: 'off', max_connections: '60' }

/** initdb, then starts it with these settings (default OUTAGE_SETTINGS); resolves when it accepts connections. */
export async function startPrivatePostgres(
  settings: Readonly<Record<string, string>> = OUTAGE_SETTINGS,
): Promise<PrivatePostgres> {
  const { dir, data } = clusterDir()
  runTool(dir, ['initdb', '-D', data, '-U', 'postgres', '--auth=trust', '-N'])
  return await runCluster(dir, data, settings)
}

function clusterDir(): { dir: string; data: string } {
  if (typeof runner === 'string') throw new Error(runner)
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-pgprivate-'))
  if (runner.owner !== undefined) chownSync(dir, runner.owner, 0)
  return { dir, data: join(dir, 'data') }
}

/** Runs one of PostgreSQL's programs (as the postgres user when root), waiting for it; throws with its output. */
function runTool(cwd: string, argv: string[]): string {
  if (typeof runner === 'string') throw new Error(runner)
  const [cmd, ...args] = runner.run(argv)
  return execFileSync(cmd as string, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

/**
 * runTool without blocking the event loop: for programs that talk to servers this process serves (a forwarder of the
 * test's in front of the primary).
 */
async function runToolAsync(cwd: string, argv: string[]): Promise<void> {
  if (typeof runner === 'string') throw new Error(runner)
  const [cmd, ...args] = runner.run(argv)
  const child = spawn(cmd as string, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err = (err + chunk).slice(-4000)
  })
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)))
  if (code !== 0) throw new Error(`${argv[0]} exited with ${code}: ${err}`)
}

export interface ReplicatedPostgres {
  primary: ReplicaNode
  standby: ReplicaNode
  dispose(): Promise<void>
}

/**
 * A primary and a streaming standby of its own (pg_basebackup -R), each on a port and folder of its own. synchronous:
 * the primary's commits wait for the standby's flush (synchronous_standby_names '*', synchronous_commit on); else
 * asynchronous streaming. Data checksums on, so a crashed primary can be rewound and rejoin as a standby. The standby
 * retries a lost WAL source every 200 ms (wal_retrieve_retry_interval; 5 s by default, which a promotion may wait out).
 * max_connections stays PostgreSQL's default: pg_rewind's own recovery run records the default, and a standby refuses to
 * start below its primary's.
 */
export async function startReplicatedPostgres(options: {
  synchronous: boolean
  /**
   * The port the standby streams from, given the primary's (default: the primary's own): a forwarder of the test's,
   * which can hold the stream back so the standby lags.
   */
  replicationVia?: (primaryPort: number) => Promise<number>
}): Promise<ReplicatedPostgres> {
  const common = { ...OUTAGE_SETTINGS, wal_retrieve_retry_interval: '200ms', max_connections: '100' }
  const a = clusterDir()
  // Data checksums: pg_rewind needs them (or wal_log_hints, which its own crash recovery run would not be given).
  runTool(a.dir, ['initdb', '-D', a.data, '-U', 'postgres', '--auth=trust', '-N', '-k'])
  const primary = await runCluster(
    a.dir,
    a.data,
    options.synchronous ? { ...common, synchronous_standby_names: '*', synchronous_commit: 'on' } : common,
  )
  const b = clusterDir()
  let standby: ReplicaNode | undefined
  try {
    standby = await startStandby(primary, b, common, options)
  } catch (error) {
    // Nothing left behind by a start that failed: the primary stopped, both folders removed.
    await primary.dispose()
    rmSync(b.dir, { recursive: true, force: true })
    throw error
  }
  const started = standby
  return {
    primary,
    standby: started,
    dispose: async () => {
      await Promise.all([primary.dispose(), started.dispose()])
    },
  }
}

async function startStandby(
  primary: ReplicaNode,
  b: { dir: string; data: string },
  common: Readonly<Record<string, string>>,
  options: Parameters<typeof startReplicatedPostgres>[0],
): Promise<ReplicaNode> {
  const source = (await options.replicationVia?.(primary.port)) ?? primary.port
  // -R: standby.signal, and primary_conninfo naming the address it copied from.
  await runToolAsync(b.dir, [
    'pg_basebackup',
    '-D',
    b.data,
    '-h',
    '127.0.0.1',
    '-p',
    String(source),
    '-U',
    'postgres',
    '-R',
  ])
  // The standby does not name a synchronous standby of its own: promoted, it takes writes alone.
  const standby = await runCluster(b.dir, b.data, common)
  if (options.synchronous) {
    // Until the standby streams, a synchronous commit would wait: ready once the primary sees it as sync.
    const c = new pg.Client({ connectionString: primary.url() })
    await c.connect()
    try {
      for (;;) {
        const r = await c.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_replication WHERE sync_state = 'sync'",
        )
        if ((r.rows[0]?.n ?? 0) > 0) break
        await new Promise((r) => setTimeout(r, 50))
      }
    } finally {
      await c.end()
    }
  }
  return standby
}

async function runCluster(dir: string, data: string, settings: Readonly<Record<string, string>>): Promise<ReplicaNode> {
  if (typeof runner === 'string') throw new Error(runner)
  const port = await freeLoopbackPort()
  let server: ChildProcess | undefined
  let frozen: number[] = []
  const url = (params?: string) => `postgres://postgres@127.0.0.1:${port}/postgres${params ? `?${params}` : ''}`

  const start = async () => {
    const [postgres, ...args] = runner.run([
      'postgres',
      ...['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1'],
      ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ])
    const child = spawn(postgres as string, args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir })
    // The server's log (stderr), last lines kept: a start that fails says why.
    let log = ''
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      log = (log + chunk).slice(-4000)
    })
    server = child
    for (;;) {
      if (child.exitCode !== null) throw new Error(`private PostgreSQL exited with ${child.exitCode}: ${log}`)
      const c = new pg.Client({ connectionString: url() })
      c.on('error', () => {})
      try {
        await c.connect()
        await c.query('SELECT 1')
        await c.end()
        return
      } catch {
        await c.end().catch(() => {})
        await new Promise((r) => setTimeout(r, 50))
      }
    }
  }
  const postmasterPid = () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
  const stop = async () => {
    const child = server
    if (child === undefined || child.exitCode !== null) return
    const exited = new Promise((r) => child.once('exit', r))
    process.kill(postmasterPid(), 'SIGINT')
    await exited
    server = undefined
  }
  const thaw = () => {
    // runuser (as root) stops itself when its child stops, as a shell's job control would, and stays stopped when the
    // child is continued: it is continued too, or it never reports the postmaster's exit.
    if (frozen.length > 0 && server?.pid !== undefined) frozen.push(server.pid)
    for (const pid of frozen) {
      try {
        process.kill(pid, 'SIGCONT')
      } catch {}
    }
    frozen = []
  }
  await start()
  const node: ReplicaNode = {
    port,
    url,
    data,
    stop,
    start,
    crash: async () => {
      const child = server
      if (child === undefined || child.exitCode !== null) return
      const exited = new Promise((r) => child.once('exit', r))
      const root = postmasterPid()
      for (const pid of [root, ...childrenOf(root)]) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {}
      }
      await exited
      server = undefined
    },
    promote: async () => {
      await runToolAsync(dir, ['pg_ctl', 'promote', '-w', '-D', data])
      const c = new pg.Client({ connectionString: url() })
      await c.connect()
      try {
        for (;;) {
          const r = await c.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')
          if (r.rows[0]?.r === false) break
          await new Promise((r) => setTimeout(r, 20))
        }
      } finally {
        await c.end()
      }
    },
    rejoinAsStandbyOf: async (primary) => {
      // pg_rewind runs a crashed target's recovery itself; -R writes standby.signal and the source as primary_conninfo.
      await runToolAsync(dir, [
        'pg_rewind',
        `--target-pgdata=${data}`,
        `--source-server=host=127.0.0.1 port=${primary.port} user=postgres dbname=postgres`,
        '-R',
      ])
      await start()
    },
    freeze: () => {
      const root = postmasterPid()
      frozen = [root, ...childrenOf(root)]
      for (const pid of frozen) process.kill(pid, 'SIGSTOP')
    },
    thaw,
    dispose: async () => {
      thaw()
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return node
}

/** The postmaster's children now (every backend and background process), from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      // Field 4 (ppid) follows the command in parentheses, which may itself hold spaces.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) out.push(Number(name))
    } catch {}
  }
  return out
}
