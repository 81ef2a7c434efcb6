// WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the COMMIT that crosses
// `wal_autocheckpoint` pages: it copies the WAL's pages into the database file and fsyncs the WAL and the database,
// all on the event loop, which serves nothing meanwhile (under refunds at concurrency 16: one every ~75 ms, the core
// idle while its fsyncs wait for the disk). Here a worker thread with its own connection checkpoints instead, and the
// event loop only pauses commits (not requests) for the short last pass that lets the WAL start over.
//
// The cycle, at most once per `everyMs` while commits happen:
// 1. bulk: the worker checkpoints (PASSIVE) every frame committed so far, while commits go on;
// 2. last: commits are held (queued writes wait; the event loop keeps serving), the worker checkpoints the frames
//    committed during the bulk pass; then commits resume, and the next one rewinds the WAL to its start (SQLite does
//    that only when a write begins with every frame checkpointed — which commits during the bulk pass prevent).
// The hold ends after `holdLimitMs` at the latest. SQLite's own automatic checkpoint stays on with a high threshold
// (SAFETY_NET_PAGES) to bound the WAL whatever the worker does, and takes over at 1 000 pages if the worker dies.
// Durability is SQLite's own: the worker's connection (synchronous=NORMAL) syncs the WAL before copying and the
// database file before the WAL may be rewound.
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import type Database from 'better-sqlite3'

/** WAL pages after which the committing connection checkpoints by itself anyway (~64 MiB at 4 KiB pages). */
const SAFETY_NET_PAGES = 16_000
/** SQLite's default threshold, restored when the worker is gone. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1_000

// Plain CommonJS evaluated as the worker's source, so it runs the same from dist/ and from src/ under tsx (a worker
// file would be .ts there). Answers each numbered request with the PASSIVE checkpoint's counts, or the error's code.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.betterSqlite3)
const db = new Database(workerData.file)
db.pragma('synchronous = NORMAL')
parentPort.on('message', (m) => {
  if (m === 'close') {
    db.close()
    Atomics.store(workerData.closed, 0, 1)
    Atomics.notify(workerData.closed, 0)
    parentPort.close()
    return
  }
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)')
    parentPort.postMessage({ pass: m, log: r.log, checkpointed: r.checkpointed })
  } catch (e) {
    parentPort.postMessage({ pass: m, failed: String((e && e.code) || 'error') })
  }
})
`

export interface CheckpointerOptions {
  /** At most one checkpoint cycle per this many ms while commits happen. Default 250. */
  everyMs?: number
  /** The longest commits are held for a cycle's last pass. Default 100. */
  holdLimitMs?: number
  /** Internal seam for tests: the module the worker loads (default better-sqlite3's). */
  workerModule?: string
}

export interface Checkpointer {
  /** A group commit just committed. */
  afterCommit(): void
  /** true while the last pass of a cycle runs: hold commits. */
  holding(): boolean
  /** Called once a hold ends. */
  onRelease(fn: () => void): void
  /** How many cycles let the WAL start over (for tests). */
  readonly cycles: number
  /** Ends the worker and closes its connection (waits up to 2 s for it), so the caller's close is the last one. */
  close(): void
}

type Reply = { pass: number; log: number; checkpointed: number } | { pass: number; failed: string }

/** The checkpoint worker on `file`, not keeping the process alive; undefined when it cannot start. */
function spawnWorker(file: string, workerModule: string | undefined, closed: Int32Array): Worker | undefined {
  let worker: Worker
  try {
    worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        file,
        betterSqlite3: workerModule ?? createRequire(import.meta.url).resolve('better-sqlite3'),
        closed,
      },
    })
  } catch {
    return undefined
  }
  worker.unref()
  return worker
}

/** Starts the worker on file (a WAL database). undefined when it cannot start: SQLite's own checkpoints stay on. */
export function startCheckpointer(
  db: Database.Database,
  file: string,
  options: CheckpointerOptions = {},
): Checkpointer | undefined {
  const everyMs = options.everyMs ?? 250
  const holdLimitMs = options.holdLimitMs ?? 100
  // Set by the worker once its connection has closed (close() waits on it).
  const closed = new Int32Array(new SharedArrayBuffer(4))
  const worker = spawnWorker(file, options.workerModule, closed)
  if (worker === undefined) return undefined
  db.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`)

  let gone = false
  let timer: NodeJS.Timeout | undefined
  let holdTimer: NodeJS.Timeout | undefined
  // The pass in flight (0: none) and whether it is a cycle's last; replies to an abandoned pass are ignored.
  let pass = 0
  let lastPass = false
  let committedDuringPass = false
  let held = false
  let cycles = 0
  let release: () => void = () => {}

  const endHold = () => {
    if (!held) return
    held = false
    clearTimeout(holdTimer)
    release()
  }
  const send = (last: boolean) => {
    pass++
    lastPass = last
    committedDuringPass = false
    worker.postMessage(pass)
  }
  const fallBack = () => {
    if (gone) return
    gone = true
    clearTimeout(timer)
    pass = 0
    endHold()
    try {
      if (db.open) db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`)
    } catch {
      // The connection is failing too: its own errors reach the callers.
    }
  }
  worker.on('error', fallBack)
  worker.on('exit', fallBack)
  worker.on('message', (reply: Reply) => {
    if (gone || reply.pass !== pass) return
    const failed = 'failed' in reply
    const complete = !failed && reply.checkpointed === reply.log
    if (!lastPass && !failed && (!complete || committedDuringPass)) {
      // Frames were committed during the bulk pass: hold commits for a last, short one.
      held = true
      holdTimer = setTimeout(() => {
        pass = 0
        endHold()
      }, holdLimitMs)
      send(true)
      return
    }
    pass = 0
    if (complete) cycles++
    endHold()
  })

  return {
    afterCommit: () => {
      if (pass !== 0) committedDuringPass = true
      if (gone || timer !== undefined || pass !== 0) return
      timer = setTimeout(() => {
        timer = undefined
        if (!gone && pass === 0) send(false)
      }, everyMs)
      timer.unref()
    },
    holding: () => held,
    onRelease: (fn) => {
      release = fn
    },
    get cycles() {
      return cycles
    },
    close: () => {
      if (gone) return
      fallBack()
      worker.postMessage('close')
      Atomics.wait(closed, 0, 0, 2_000)
    },
  }
}
