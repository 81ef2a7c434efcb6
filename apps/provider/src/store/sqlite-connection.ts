// One SQLite connection shared by the keys store and the demo ledger's store: opening (pragmas), the group-commit
// writer and error wrapping. One process per file is the supported deployment.
import Database from 'better-sqlite3'
import { StoreError } from '../errors.js'

/**
 * What a committed write survives. 'process-crash': WAL with synchronous=NORMAL — a commit survives the process
 * being killed, but a power loss or kernel crash may roll back the last commits (the WAL is synced only at
 * checkpoints). 'power-loss': synchronous=FULL — every commit is fsynced before it returns.
 */
export type SqliteDurability = 'process-crash' | 'power-loss'

export interface SqliteSettings {
  durability: SqliteDurability
  journalMode: string
  synchronous: 'NORMAL' | 'FULL' | string
}

export interface SqliteConnection {
  readonly db: Database.Database
  readonly settings: SqliteSettings
  /** Runs a read now; a database error becomes a StoreError. */
  read<T>(fn: () => T): Promise<T>
  /** Queues a write for the next group commit; resolves once that transaction committed. */
  write<T>(run: () => T): Promise<T>
  /** Commits queued writes now and closes the connection. */
  close(): void
}

const SYNCHRONOUS = ['OFF', 'NORMAL', 'FULL', 'EXTRA']

const storeError = (cause: unknown) =>
  cause instanceof StoreError ? cause : new StoreError('SQLite store operation failed', { cause })

/** Opens file (creating it) in WAL mode with the durability's synchronous level. RangeError for an unknown one. */
export function openSqliteConnection(file: string, durability: SqliteDurability, schema: string): SqliteConnection {
  if (durability !== 'process-crash' && durability !== 'power-loss') {
    throw new RangeError("durability must be 'process-crash' or 'power-loss'")
  }
  let db: Database.Database
  try {
    db = new Database(file)
    db.pragma('journal_mode = WAL')
    db.pragma(durability === 'power-loss' ? 'synchronous = FULL' : 'synchronous = NORMAL')
    db.pragma('busy_timeout = 5000')
    db.exec(schema)
  } catch (cause) {
    throw new StoreError('cannot open the SQLite store', { cause })
  }
  const sync = Number(db.pragma('synchronous', { simple: true }))
  const settings: SqliteSettings = {
    durability,
    journalMode: String(db.pragma('journal_mode', { simple: true })),
    synchronous: SYNCHRONOUS[sync] ?? String(sync),
  }
  const writer = groupCommit(db)
  return {
    db,
    settings,
    read: <T>(fn: () => T): Promise<T> => {
      try {
        return Promise.resolve(fn())
      } catch (cause) {
        return Promise.reject(storeError(cause))
      }
    },
    write: writer.write,
    close: () => {
      // Writes already queued are committed (and answered) before the database closes.
      writer.flush()
      if (db.open) db.close()
    },
  }
}

// Group commit. Writes issued in the same turn of the event loop run in one IMMEDIATE transaction, each inside
// its own savepoint (better-sqlite3 nests a transaction function as a SAVEPOINT), and every caller is answered
// only after that COMMIT returned — so a claim is still committed (fsynced with 'power-loss') before its caller
// calls billing, and an outcome before the answer is sent. One failed write rolls back its savepoint only; a
// failed COMMIT fails every write of the batch (none of them committed). Under load this turns one commit (and
// one fsync) per write into one per batch.
function groupCommit(db: Database.Database) {
  interface QueuedWrite {
    run: () => unknown
    resolve: (value: unknown) => void
    reject: (error: unknown) => void
  }
  type Done = { ok: true; value: unknown } | { ok: false; error: unknown }
  let queue: QueuedWrite[] = []
  let scheduled = false
  const runBatch = db.transaction((items: QueuedWrite[]): Done[] =>
    items.map((item): Done => {
      try {
        return { ok: true, value: item.run() }
      } catch (error) {
        return { ok: false, error }
      }
    }),
  )
  const flush = () => {
    scheduled = false
    const items = queue
    queue = []
    if (items.length === 0) return
    let done: Done[]
    try {
      done = runBatch.immediate(items)
    } catch (cause) {
      for (const item of items) item.reject(storeError(cause))
      return
    }
    items.forEach((item, i) => {
      const d = done[i] as Done
      if (d.ok) item.resolve(d.value)
      else item.reject(storeError(d.error))
    })
  }
  const write = <T>(run: () => T): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({ run, resolve: resolve as (value: unknown) => void, reject })
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    })
  return { write, flush }
}
