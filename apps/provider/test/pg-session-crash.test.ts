// What a PostgreSQL crash keeps of the session store: a closed session stays closed (DELETE waited for the WAL flush),
// an open or touch that no later synchronous commit flushed is lost (they do not wait). A private PostgreSQL cluster
// (initdb in a temporary directory) whose WAL writer is stopped, so nothing reaches the WAL file unless a commit
// flushes it itself; then the WAL writer is killed, PostgreSQL restarts after the crash and replays its WAL.
import assert from 'node:assert/strict'
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import pg from 'pg'
import { PgSessionStore } from '../src/store/pg-session-store.js'

// initdb and postgres refuse to run as root: as root, run them as the system's postgres user.
function clusterRunner(): { run: (argv: string[]) => string[]; owner?: number } | string {
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
const skip = typeof runner === 'string' ? runner : undefined
const PORT = 20_000 + (process.pid % 20_000)

let dir = ''
let server: ChildProcess | undefined
/** The WAL writer while the test holds it stopped (killed in `after` if the test failed before its crash). */
let stopped: number | undefined
const url = () => `postgres://postgres@/postgres?host=${encodeURIComponent(dir)}&port=${PORT}`

async function query<R extends pg.QueryResultRow>(sql: string): Promise<R[]> {
  const c = new pg.Client({ connectionString: url() })
  // A backend the crash ends under a query resets the socket: pg rejects the query AND emits 'error' on the client,
  // which with no listener is an uncaught exception that fails the test (whenReady's loop hits this after the kill).
  // The rejection is what whenReady handles; the event carries nothing more.
  c.on('error', () => {})
  await c.connect()
  try {
    return (await c.query<R>(sql)).rows
  } finally {
    await c.end()
  }
}

/** Connects until the cluster accepts connections and runs a WAL writer other than `previous` (after a crash: once
 * recovery finished and a new one started). */
async function whenReady(previous?: number): Promise<number> {
  for (;;) {
    try {
      const [w] = await query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'`)
      if (w !== undefined && w.pid !== previous) return w.pid
    } catch (e) {
      if (server?.exitCode !== null) throw new Error(`private PostgreSQL exited: ${String(e)}`)
    }
    await new Promise((r) => setImmediate(r))
  }
}

before(async () => {
  if (typeof runner === 'string') return
  dir = mkdtempSync(join(tmpdir(), 'tollgate-pgcrash-'))
  if (runner.owner !== undefined) chownSync(dir, runner.owner, 0)
  const [initdb, ...initArgs] = runner.run(['initdb', '-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-N'])
  execFileSync(initdb as string, initArgs, { stdio: 'ignore', cwd: dir })
  // No background writer, autovacuum or timed checkpoint: nothing else flushes the WAL during the test.
  const [postgres, ...args] = runner.run([
    'postgres',
    ...['-D', join(dir, 'data'), '-p', String(PORT), '-k', dir, '-c', 'listen_addresses='],
    ...['-c', 'autovacuum=off', '-c', 'bgwriter_lru_maxpages=0', '-c', 'checkpoint_timeout=3600'],
    ...['-c', 'wal_writer_delay=10000', '-c', 'synchronous_commit=on', '-c', 'fsync=on'],
  ])
  server = spawn(postgres as string, args, { stdio: 'ignore', cwd: dir })
  await whenReady()
})

after(async () => {
  if (stopped !== undefined) process.kill(stopped, 'SIGKILL')
  if (server !== undefined && server.exitCode === null) {
    const pid = Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
    const exited = new Promise((r) => server?.once('exit', r))
    process.kill(pid, 'SIGINT') // fast shutdown
    await exited
  }
  if (dir !== '') rmSync(dir, { recursive: true, force: true })
})

test('after a PostgreSQL crash a closed session stays closed; unflushed opens and touches are lost', {
  skip,
}, async () => {
  const store = await PgSessionStore.open({ connectionString: url(), schema: 'crash', maxConnections: 1 })
  const caps = { idleMs: 60_000, maxSessions: 10, maxPerOwner: 10 }
  const table = async () =>
    (await query<{ key: string; last_seen: string }>('SELECT key, last_seen FROM crash.mcp_sessions ORDER BY key')).map(
      (r) => `${r.key}@${r.last_seen}`,
    )
  try {
    assert.equal(await store.open('closed', 'alice', 1_000, caps), true)
    assert.equal(await store.open('kept', 'alice', 1_000, caps), true)
    await query('CREATE TABLE public.flush_marker ()') // a synchronous commit: everything above is on disk
    const walWriter = await whenReady()
    process.kill(walWriter, 'SIGSTOP')
    stopped = walWriter
    assert.equal(await store.close('closed', 2_000, caps.idleMs), true)
    assert.equal(await store.open('opened-after', 'alice', 3_000, caps), true)
    assert.equal(await store.touch('kept', 4_000, caps.idleMs), true)
    assert.deepEqual(await table(), ['kept@4000', 'opened-after@3000'])
    // The crash: PostgreSQL sees a child die, ends every backend, reinitializes shared memory (losing WAL not yet
    // written) and replays the WAL on disk.
    process.kill(walWriter, 'SIGKILL')
    stopped = undefined
    await whenReady(walWriter)
    assert.deepEqual(await table(), ['kept@1000'])
  } finally {
    await store.dispose().catch(() => {})
  }
})
