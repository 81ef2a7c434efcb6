// A private PostgreSQL cluster (initdb in a temporary directory, a Unix socket only) for a test that must crash its
// database, or a bench that must place the database's processes on chosen cores. Debian's PostgreSQL binaries; as
// root (initdb and postgres refuse to run as root) they run as the system's postgres user.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

type Runner = { run: (argv: string[]) => string[]; owner?: number }

function clusterRunner(): Runner | string {
  const bin = [
    '/usr/local/bin',
    '/usr/lib/postgresql/15/bin',
    '/usr/lib/postgresql/16/bin',
    '/usr/lib/postgresql/17/bin',
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

/** Why no private cluster can be started here, or undefined when one can. */
export const privatePostgresUnavailable: string | undefined = typeof runner === 'string' ? runner : undefined

export interface PrivatePostgres {
  /** postgres://postgres@/postgres over the cluster's Unix socket. */
  url: string
  dir: string
  /** The postmaster (or the command that runs it, e.g. runuser). */
  server: ChildProcess
  /** Fast shutdown, then the directory is removed. */
  stop(): Promise<void>
}

export interface PrivatePostgresOptions {
  port: number
  /** `-c name=value` settings. */
  settings?: readonly string[]
  /** Prefix of the postmaster's command line, e.g. ['taskset', '-c', '0'] (its backends inherit the affinity). */
  launcher?: readonly string[]
}

/** initdb, starts postgres and resolves once it accepts connections. */
export async function startPrivatePostgres(options: PrivatePostgresOptions): Promise<PrivatePostgres> {
  if (typeof runner === 'string') throw new Error(runner)
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-pg-'))
  if (runner.owner !== undefined) chownSync(dir, runner.owner, 0)
  const [initdb, ...initArgs] = runner.run(['initdb', '-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-N'])
  execFileSync(initdb as string, initArgs, { stdio: 'ignore', cwd: dir })
  const [command, ...args] = [
    ...(options.launcher ?? []),
    ...runner.run([
      'postgres',
      ...['-D', join(dir, 'data'), '-p', String(options.port), '-k', dir, '-c', 'listen_addresses='],
      ...(options.settings ?? []).flatMap((s) => ['-c', s]),
    ]),
  ]
  const server = spawn(command as string, args, { stdio: 'ignore', cwd: dir })
  const url = `postgres://postgres@/postgres?host=${encodeURIComponent(dir)}&port=${options.port}`
  for (;;) {
    const c = new pg.Client({ connectionString: url })
    try {
      await c.connect()
      await c.query('SELECT 1')
      break
    } catch (e) {
      if (server.exitCode !== null) throw new Error(`private PostgreSQL exited: ${String(e)}`)
      await new Promise((r) => setTimeout(r, 20))
    } finally {
      await c.end().catch(() => {})
    }
  }
  return {
    url,
    dir,
    server,
    async stop() {
      if (server.exitCode === null) {
        const exited = new Promise((r) => server.once('exit', r))
        const pid = Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
        process.kill(pid, 'SIGINT') // fast shutdown
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
