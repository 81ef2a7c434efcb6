// Group commit for PostgreSQL: calls of one statement kind issued while the previous batch of that kind is still in
// flight (or in the same turn of the event loop) go to the server as ONE statement over unnest() arrays — one round
// trip, one commit and one WAL flush for the whole batch instead of one each. Under load a refund's four statements
// then cost the server and this process a fraction of a round trip each (both sit on the same 2 cores as the load;
// the per-statement socket writes and the backends' per-statement work were most of a PostgreSQL refund's CPU).
//
// Each call still gets its own answer, and only once the statement that carries it has committed (a batch is one
// autocommit statement), so what a caller is told has happened, has.
import pg from 'pg'

export interface BatchSpec<I, R> {
  /**
   * Runs a batch of two or more calls as one statement. Answers one entry per item, in order: a result, or undefined
   * for an item the batch could not settle (it then runs alone, through runOne). Throwing means nothing committed.
   */
  runBatch(items: readonly I[]): Promise<(R | undefined)[]>
  /** Runs one call on its own (a batch of one, a fallback, or an item the batch left unsettled). */
  runOne(item: I): Promise<R>
  /**
   * The row an item writes or locks (omit for reads): two items with the same row never share a statement (the later
   * one waits for the next batch), so a batch never touches a row twice. Batches are also sorted by it, so batches in
   * flight on different replicas lock rows in the same order.
   */
  rowOf?: (item: I) => string
  /** At most this many items per statement (bounds the statement's size); default 256. */
  maxItems?: number
  /**
   * At most this many batches of this kind in flight at once; default 1. With more, calls arriving while a batch is
   * in flight start the next one at once instead of waiting for it — but never with a row (rowOf) that a batch in
   * flight holds: such a call waits until that batch has answered. Keep it within the connections the statements
   * run on, or the batches queue for a connection instead of growing.
   */
  maxInFlight?: number
}

interface Entry<I, R> {
  item: I
  resolve: (value: R) => void
  reject: (error: unknown) => void
}

/**
 * A function that queues one call for the next batch of its kind. Calls arriving while maxInFlight batches of the kind
 * are in flight wait for one to answer and then go together, so batches grow with the load and the latency of a lone
 * call is one turn of the event loop.
 */
export function statementBatcher<I, R>(spec: BatchSpec<I, R>): (item: I) => Promise<R> {
  const maxItems = spec.maxItems ?? 256
  const maxInFlight = spec.maxInFlight ?? 1
  const rowOf = spec.rowOf
  let queue: Entry<I, R>[] = []
  let inFlight = 0
  // The rows of the batches in flight: a call for one of them waits (two statements in flight never touch one row).
  const rowsInFlight = new Set<string>()
  let scheduled = false

  const schedule = () => {
    if (inFlight >= maxInFlight || scheduled || queue.length === 0) return
    scheduled = true
    setImmediate(() => {
      scheduled = false
      void flush()
    })
  }

  const alone = (e: Entry<I, R>) => spec.runOne(e.item).then(e.resolve, e.reject)

  const flush = async () => {
    const batch: Entry<I, R>[] = []
    const later: Entry<I, R>[] = []
    const rows = new Set<string>()
    for (const e of queue) {
      const row = rowOf?.(e.item)
      if (batch.length >= maxItems || (row !== undefined && (rows.has(row) || rowsInFlight.has(row)))) later.push(e)
      else {
        if (row !== undefined) rows.add(row)
        batch.push(e)
      }
    }
    queue = later
    // Everything waiting is for rows in flight: the batch holding them schedules the next one when it answers.
    if (batch.length === 0) return
    inFlight++
    for (const row of rows) rowsInFlight.add(row)
    // Room for another batch: calls arriving from now on need not wait for this one.
    schedule()
    try {
      if (batch.length === 1) {
        await alone(batch[0] as Entry<I, R>)
        return
      }
      if (rowOf !== undefined) batch.sort((a, b) => compare(rowOf(a.item), rowOf(b.item)))
      let results: (R | undefined)[]
      try {
        results = await spec.runBatch(batch.map((e) => e.item))
      } catch (error) {
        // The server refused the statement (one item's constraint, a deadlock with another replica…): nothing of it
        // committed, so each call runs alone and only the faulty one fails. Any other failure (connection lost,
        // perhaps mid-commit) is every call's: whether it committed is unknown, and the callers' retries find out.
        if (!(error instanceof pg.DatabaseError)) throw error
        await Promise.all(batch.map(alone))
        return
      }
      batch.forEach((e, i) => {
        const r = results[i]
        if (r === undefined) void alone(e)
        else e.resolve(r)
      })
    } catch (error) {
      for (const e of batch) e.reject(error)
    } finally {
      inFlight--
      for (const row of rows) rowsInFlight.delete(row)
      schedule()
    }
  }

  return (item: I) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject })
      schedule()
    })
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
