// A PostgreSQL cluster of the test's own (initdb in a temporary directory, TCP on a free loopback port), which the
// test may stop, start again, freeze (SIGSTOP) and thaw — never the shared one. initdb and postgres refuse to run as
// root: as root they run as the system's postgres user.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
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
  const dir = join(bin, '..')
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

/**
 * The server settings (`-c name=value`) unless the caller gives its own. fsync off: the suites using the defaults are
 * about outages, not power loss; it keeps the cluster quick on a shared machine.
 */
const OUTAGE_SETTINGS: Readonly<Record<string, string>> = { fsync: 'off', autovacuum: 'off', max_connections: '60' }

/** initdb, then starts it with these settings (default OUTAGE_SETTINGS); resolves when it accepts connections. */
export async function startPrivatePostgres(
  settings: Readonly<Record<string, string>> = OUTAGE_SETTINGS,
): Promise<PrivatePostgres> {
  if (typeof runner === 'string') throw new Error(runner)
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-pgprivate-'))
  if (runner.owner !== undefined) chownSync(dir, runner.owner, 0)
  const data = join(dir, 'data')
  const [initdb, ...initArgs] = runner.run(['initdb', '-D', data, '-U', 'postgres', '--auth=trust', '-N'])
  execFileSync(initdb as string, initArgs, { stdio: 'ignore', cwd: dir })
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
    const child = spawn(postgres as string, args, { stdio: 'ignore', cwd: dir })
    server = child
    for (;;) {
      if (child.exitCode !== null) throw new Error(`private PostgreSQL exited with ${child.exitCode}`)
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
  return {
    port,
    url,
    stop,
    start,
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
