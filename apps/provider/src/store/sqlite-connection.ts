// One SQLite connection shared by the keys store and the demo ledger's store: opening (pragmas), the group-commit
// writer and error wrapping. One process per file is the supported deployment.
import { closeSync, fdatasync, fdatasyncSync, openSync, statfsSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { StoreError } from '../errors.js'
import { StoreHealth } from './outage.js'
import { type Checkpointer, type CheckpointerOptions, startCheckpointer } from './sqlite-checkpointer.js'

/**
 * What a committed write survives. 'process-crash': WAL with synchronous=NORMAL — a commit survives the process
 * being killed, but a power loss or kernel crash may roll back the last commits (the WAL is synced only at
 * checkpoints). 'power-loss': every commit's WAL frames are fdatasynced before any caller learns of that commit —
 * what synchronous=FULL does, but off the event loop (see groupCommit).
 */
export type SqliteDurability = 'process-crash' | 'power-loss'

export interface SqliteSettings {
  durability: SqliteDurability
  journalMode: string
  /** SQLite's own synchronous level, read back from the connection. */
  synchronous: 'NORMAL' | 'FULL' | string
  /** When the WAL reaches the disk: 'every-commit' (fdatasync before answering) or 'checkpoint' (SQLite's NORMAL). */
  walSync: 'every-commit' | 'checkpoint'
}

/**
 * Internal seams for tests: the WAL sync (default fs.fdatasync), the background checkpoints (false: SQLite's own), the
 * free space of the file system holding the store (default fs.statfsSync of its directory).
 */
export interface SqliteConnectionHooks {
  fdatasync?: (fd: number, done: (error: Error | null) => void) => void
  checkpoints?: CheckpointerOptions | false
  freeBytes?: (directory: string) => number
}

/**
 * Free space the file system must have again for a committed write to end a disk outage. A full disk still takes the
 * writes that fit in space SQLite already holds (the WAL's, reused from its start after a checkpoint): such a commit
 * between two refused writes would end the outage and the next refusal begin another, logged twice. 1 MiB is hundreds
 * of refunds' WAL frames; the outage then ends once space was actually freed.
 */
export const DISK_ROOM_BYTES = 1024 * 1024

export interface SqliteConnection {
  readonly db: Database.Database
  readonly settings: SqliteSettings
  /** Runs a read now; answers once every commit it may have seen is durable. A database error becomes a StoreError. */
  read<T>(fn: () => T): Promise<T>
  /**
   * Queues a write for the next group commit. The write is atomic: if run throws, none of its changes commit (and the
   * other writes of the batch do). run may run twice (again when another write of its batch throws), so it must change
   * nothing outside the database. Resolves once that transaction committed and, with 'power-loss',
   * once the WAL sync covering it returned — unless `onDiskFirst(value)` says false: then at the COMMIT. Only for a
   * write whose caller always makes a waiting write (or a read) before anyone outside the process can learn of it:
   * that later sync covers this commit too, as the WAL is one sequence (see keysStore's claim).
   */
  write<T>(run: () => T, onDiskFirst?: (value: T) => boolean): Promise<T>
  /** The background checkpointer (sqlite-checkpointer.ts); undefined when SQLite checkpoints in its commits. */
  readonly checkpointer: Checkpointer | undefined
  /** Up or down, from the last read's or write's result (the once-per-outage log line). */
  readonly health: StoreHealth
  /** Commits queued writes now and closes the connection. */
  close(): void
}

const SYNCHRONOUS = ['OFF', 'NORMAL', 'FULL', 'EXTRA']

/** A failure as a StoreError; an outage marks the store down if the call started at epoch `since` (default: now). */
const storeErrorOf =
  (health: StoreHealth) =>
  (cause: unknown, since = health.epoch): StoreError =>
    cause instanceof StoreError
      ? cause
      : new StoreError('SQLite store operation failed', { cause, health }).reported(since)

/** Opens file (creating it) in WAL mode for the durability. RangeError for an unknown one. */
export function openSqliteConnection(
  file: string,
  durability: SqliteDurability,
  schema: string,
  hooks: SqliteConnectionHooks = {},
): SqliteConnection {
  if (durability !== 'process-crash' && durability !== 'power-loss') {
    throw new RangeError("durability must be 'process-crash' or 'power-loss'")
  }
  let db: Database.Database
  try {
    db = new Database(file)
    db.pragma('journal_mode = WAL')
    // NORMAL for both: with 'power-loss' the WAL is fdatasynced after each group commit, before answering.
    db.pragma('synchronous = NORMAL')
    // A batch that runs again after a failed write puts each write in its own savepoint (groupCommit), and SQLite
    // copies each existing page a savepoint changes into a sub-journal, kept in memory only up to 64 KiB by default and
    // then spilled to a temporary file (a pwrite per page). A refund made as one write (DemoLedgerStore.applyClaiming)
    // crossed that line: measured when every write had its savepoint, the spill doubled the pwrites per refund. In
    // memory, a sub-journal is at most one write's changed pages; it is never needed after a crash (the WAL is what
    // recovery reads).
    db.pragma('temp_store = MEMORY')
    db.pragma('busy_timeout = 5000')
    db.exec(schema)
  } catch (cause) {
    throw new StoreError('cannot open the SQLite store', { cause })
  }
  let walFd: number | undefined
  if (durability === 'power-loss') {
    try {
      walFd = openSync(`${file}-wal`, 'r')
    } catch (cause) {
      db.close()
      throw new StoreError('cannot open the SQLite store', { cause })
    }
  }
  const sync = Number(db.pragma('synchronous', { simple: true }))
  const settings: SqliteSettings = {
    durability,
    journalMode: String(db.pragma('journal_mode', { simple: true })),
    synchronous: SYNCHRONOUS[sync] ?? String(sync),
    walSync: walFd === undefined ? 'checkpoint' : 'every-commit',
  }
  const health = new StoreHealth()
  const storeError = storeErrorOf(health)
  const durable = walFd === undefined ? undefined : walSyncer(walFd, hooks.fdatasync ?? fdatasync, storeError)
  const checkpointer =
    hooks.checkpoints === false || settings.journalMode !== 'wal'
      ? undefined
      : startCheckpointer(db, file, hooks.checkpoints)
  const freeBytes =
    hooks.freeBytes ??
    ((directory: string) => {
      const fs = statfsSync(directory)
      return fs.bavail * fs.bsize
    })
  const hasRoom = () => {
    try {
      return freeBytes(dirname(file)) >= DISK_ROOM_BYTES
    } catch {
      // Not measurable here: the committed write is the evidence, as for any other outage.
      return true
    }
  }
  const writer = groupCommit(db, durable, checkpointer, storeError, health, hasRoom)
  return {
    db,
    settings,
    checkpointer,
    health,
    read: <T>(fn: () => T): Promise<T> => {
      let value: T
      try {
        value = fn()
      } catch (cause) {
        return Promise.reject(storeError(cause))
      }
      // A read says nothing of the disk (it works on a full one): only a write that committed ends an outage.
      // What the read saw may include commits whose WAL sync is still running: answer once they are durable.
      return durable === undefined ? Promise.resolve(value) : durable.afterSyncOf(durable.committed()).then(() => value)
    },
    write: writer.write,
    close: () => {
      // The worker's connection closes first, so this one is the last: it checkpoints and removes the WAL.
      checkpointer?.close()
      // Writes already queued are committed, synced and answered before the database closes.
      writer.flush()
      durable?.syncAndClose()
      if (db.open) db.close()
    },
  }
}

// The WAL sync of 'power-loss'. Each group commit takes the next sequence number; one fdatasync of the WAL file
// (in libuv's thread pool, so the event loop keeps serving) makes every commit before it durable, and while one
// runs, later commits wait for the next one — so a sync covers as many commits as arrived during the previous one.
// fdatasync on any descriptor of the file flushes the pages SQLite wrote through its own.
// A first sync starts one step of the event loop late (setImmediate): a group commit already scheduled for this turn
// then commits first and rides on the same sync. Each sync costs ~100 µs of CPU on the server's core (measured: ~0.2 ms
// wall per sync, ~45 µs user + ~55 µs system); under refunds at concurrency 16 the late start gave ~3% more refunds/s
// (7 of 8 alternated same-minute rounds), and the wait it adds is one turn of the loop.
// A sync that returns while commits wait starts the next at once instead: under load a sync is running almost all the
// time (95% of group commits happened during one; the fdatasync itself took ~0.8 ms), and a late restart left the
// WAL unsynced for a median 0.9 ms more per cycle — the rest of that turn's work — while every waiting refund waited.
// Measured: +6% refunds/s at concurrency 16 (median of 8 alternated rounds, [0.98–1.19]).
function walSyncer(
  fd: number,
  sync: NonNullable<SqliteConnectionHooks['fdatasync']>,
  storeError: (cause: unknown, since?: number) => StoreError,
) {
  let committed = 0
  let synced = 0
  let scheduled = false
  let running = false
  let closed = false
  let waiters: { seq: number; resolve: () => void; reject: (e: unknown) => void }[] = []
  const start = () => {
    if (scheduled || running || synced >= committed) return
    scheduled = true
    setImmediate(syncNow)
  }
  const syncNow = () => {
    scheduled = false
    // Closed meanwhile: syncAndClose synced everything and closed the descriptor.
    if (closed || synced >= committed) return
    running = true
    const through = committed
    sync(fd, (error) => {
      running = false
      if (closed) return closeSync(fd)
      const ready = waiters.filter((w) => w.seq <= through)
      waiters = waiters.filter((w) => w.seq > through)
      if (error === null) {
        synced = through
        for (const w of ready) w.resolve()
      } else {
        // Not known to be on disk: those callers get an error (a retry with the same key finds the row, or not).
        for (const w of ready) w.reject(storeError(error))
      }
      if (error === null && !scheduled && synced < committed) syncNow()
      else start()
    })
  }
  return {
    committed: () => committed,
    /** A group commit just committed: its sequence number. */
    commit: () => ++committed,
    /** Resolves once commit seq is on disk (at once when it already is). */
    afterSyncOf: (seq: number): Promise<void> => {
      if (seq <= synced) return Promise.resolve()
      return new Promise((resolve, reject) => {
        waiters.push({ seq, resolve, reject })
        start()
      })
    },
    syncAndClose: () => {
      if (closed) return
      fdatasyncSync(fd)
      synced = committed
      for (const w of waiters) w.resolve()
      waiters = []
      closed = true
      // A sync still running in the thread pool closes the descriptor when it returns.
      if (!running) closeSync(fd)
    },
  }
}

interface QueuedWrite {
  run: () => unknown
  onDiskFirst: ((value: unknown) => boolean) | undefined
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}
type Done = { ok: true; value: unknown } | { ok: false; error: unknown }

/**
 * Runs a batch in one IMMEDIATE transaction: bare first; if a write threw, the whole batch rolls back and runs again
 * with each write in its own savepoint, so only the failed one fails. A failed BEGIN or COMMIT throws.
 */
function batchRunner(db: Database.Database): (items: QueuedWrite[]) => Done[] {
  // Set when a write (not BEGIN or COMMIT) threw in the bare pass: the batch then runs again, isolated.
  let writeFailed = false
  const runBare = db.transaction((items: QueuedWrite[]): Done[] =>
    items.map((item): Done => {
      try {
        return { ok: true, value: item.run() }
      } catch (error) {
        writeFailed = true
        throw error
      }
    }),
  )
  const isolated = db.transaction((run: () => unknown) => run())
  const runIsolated = db.transaction((items: QueuedWrite[]): Done[] =>
    items.map((item): Done => {
      try {
        return { ok: true, value: isolated(item.run) }
      } catch (error) {
        return { ok: false, error }
      }
    }),
  )
  return (items: QueuedWrite[]): Done[] => {
    writeFailed = false
    try {
      return runBare.immediate(items)
    } catch (error) {
      if (!writeFailed) throw error
      return runIsolated.immediate(items)
    }
  }
}

// Group commit. Writes issued in the same turn of the event loop run in one IMMEDIATE transaction, and every caller
// is answered only after that COMMIT returned and, with 'power-loss', after the WAL sync that covers it — so a claim
// is durable before its caller calls billing, and an outcome before the answer is sent. Each write is atomic: the
// batch first runs every write bare; if one throws (it may have made part of its changes), the whole batch rolls
// back and runs again with each write in its own savepoint (better-sqlite3 nests a transaction function as a
// SAVEPOINT), so the failed one rolls back alone. Writes rarely fail, and a savepoint per write cost ~5% of refunds/s
// (SAVEPOINT and RELEASE, and SQLite copying each page the write changes into the savepoint's sub-journal). A failed
// BEGIN or COMMIT fails every write of the batch (none of them committed). Under load this turns one commit (and one
// fsync) per write into one per batch, and the fsync no longer stops the event loop.
function groupCommit(
  db: Database.Database,
  durable: ReturnType<typeof walSyncer> | undefined,
  checkpointer: Checkpointer | undefined,
  storeError: (cause: unknown, since?: number) => StoreError,
  health: StoreHealth,
  hasRoom: () => boolean,
) {
  let queue: QueuedWrite[] = []
  let scheduled = false
  // Rows changed on this connection since it opened: a batch that changed none wrote no page (see flush).
  const totalChanges = db.prepare('SELECT total_changes()').pluck()
  const runBatch = batchRunner(db)
  const scheduleFlush = () => {
    if (scheduled) return
    scheduled = true
    setImmediate(flush)
  }
  const flush = () => {
    scheduled = false
    // The checkpointer's last pass is running: the queue waits for its end (onRelease below).
    if (checkpointer?.holding()) return
    const items = queue
    queue = []
    if (items.length === 0) return
    let done: Done[]
    const since = health.epoch
    // Whether a batch changed a row matters only to end an outage (allWritten below): counted only while the store is
    // down, so a healthy batch runs no statement of its own.
    const countChanges = health.outage !== undefined
    let changesBefore: unknown
    try {
      // Inside: on a closed connection (a write queued after close) this throws, and the writes fail as a batch does.
      if (countChanges) changesBefore = totalChanges.get()
      done = runBatch(items)
    } catch (cause) {
      const error = storeError(cause, since)
      for (const item of items) item.reject(error)
      return
    }
    checkpointer?.afterCommit()
    // A commit of writes that all went through (with 'power-loss', once its sync below returned too) ends an outage.
    // Not a batch with a failed write: on a full disk SQLite may commit the batch but fail its writes one by one. Nor
    // a batch that changed no row: its COMMIT wrote nothing, so it succeeds on a full disk as a read does — an UPDATE
    // that matched nothing (ending the lease of a claim whose own write had failed) ended a disk outage that way and
    // the next refund began another, logged again.
    const allWritten = done.every((d) => d.ok) && (!countChanges || totalChanges.get() !== changesBefore)
    // A disk outage ends only once the file system has room again (DISK_ROOM_BYTES), not with a write that fit.
    const ends = () => allWritten && (health.outage?.kind !== 'disk' || hasRoom())
    if (durable === undefined && ends()) health.succeeded(since)
    const answer = (item: QueuedWrite, d: Done) => {
      if (d.ok) item.resolve(d.value)
      else item.reject(storeError(d.error, since))
    }
    if (durable === undefined) {
      for (const [i, item] of items.entries()) answer(item, done[i] as Done)
      return
    }
    // Writes whose callers may go on at the COMMIT are answered now; the others once the WAL sync returned. Reads
    // and every later waiting write wait for a sync that covers this commit too (the WAL is one sequence).
    const seq = durable.commit()
    const waiting: number[] = []
    items.forEach((item, i) => {
      const d = done[i] as Done
      if (d.ok && item.onDiskFirst !== undefined && !item.onDiskFirst(d.value)) answer(item, d)
      else waiting.push(i)
    })
    if (waiting.length === 0) return
    durable.afterSyncOf(seq).then(
      () => {
        if (ends()) health.succeeded(since)
        for (const i of waiting) answer(items[i] as QueuedWrite, done[i] as Done)
      },
      (error: unknown) => {
        for (const i of waiting) (items[i] as QueuedWrite).reject(error)
      },
    )
  }
  const write = <T>(run: () => T, onDiskFirst?: (value: T) => boolean): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({
        run,
        onDiskFirst: onDiskFirst as ((value: unknown) => boolean) | undefined,
        resolve: resolve as (value: unknown) => void,
        reject,
      })
      scheduleFlush()
    })
  checkpointer?.onRelease(() => {
    if (queue.length > 0) scheduleFlush()
  })
  return { write, flush }
}
