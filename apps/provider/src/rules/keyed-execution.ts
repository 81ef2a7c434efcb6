// Exactly-once execution of a keyed operation: claim the key, run the billing call under the claim, then finish it
// with the outcome (or abandon it when the call's fate is unknown), and replay what a key already recorded.
import { randomUUID } from 'node:crypto'
import type { BillingPort, ContractObject, LookupOutcome } from '../billing/port.js'
import { StoreError } from '../errors.js'
import { RETRY_AFTER_SECONDS } from '../store/outage.js'
import type { ClaimRequest, ClaimResult, OperationKind, OperationRow, Outcome, Store } from '../store/store.js'
import { fail, inProgress, notFound, ok, outageAnswer, type ToolAnswer } from './answers.js'
import type { FinishedWith, KeyRecordOf } from './same-transaction.js'
import { UnendedClaims } from './unended-claims.js'

/** What a keyed operation's run did: the billing outcome (and whether its commit finished the claim), or not found. */
export type KeyedRun = FinishedWith | 'not_found'

/** One keyed call (a refund, a cancellation): its key and fingerprint, what it is on, how to run and record it. */
export interface KeyedOperation {
  readonly key: string
  /** The call's parameters as compared with a replay's (a differing replay is idempotency_conflict). */
  readonly fingerprint: string
  readonly operation: OperationKind
  readonly targetRef: string
  /**
   * The billing call under the key's claim (after billing.lookup found nothing, when a former owner's attempt had no
   * outcome). owner and recordOf let a same-transaction commit finish the claim with its change.
   */
  run(owner: string, recordOf: KeyRecordOf): Promise<KeyedRun>
  /** The key's record of a billing outcome. */
  outcomeOf(outcome: LookupOutcome): Outcome
  /** The claim, call and record as one write, or undefined having written nothing (then the usual path). */
  claiming(claim: ClaimRequest, recordOf: KeyRecordOf): Promise<LookupOutcome | undefined> | undefined
}

export interface KeyedExecutionOptions {
  store: Store
  /** For the current state of pending operations (lookup). */
  billing: BillingPort
  now: () => number
  leaseMs: number
  endLeaseRetryMs: number
  onReplay: ((operation: OperationKind, result: 'replayed' | 'conflict' | 'in_progress') => void) | undefined
}

/** Claims, runs, finishes or abandons, and replays keyed operations; one per rules engine. */
export class KeyedExecution {
  readonly #store: Store
  readonly #billing: BillingPort
  readonly #now: () => number
  readonly #leaseMs: number
  readonly #onReplay: KeyedExecutionOptions['onReplay']
  readonly #unended: UnendedClaims
  #running = 0
  // Unique per process start, so a restarted process never mistakes a dead process's claim for its own.
  readonly #instance = randomUUID()
  #seq = 0

  constructor(options: KeyedExecutionOptions) {
    this.#store = options.store
    this.#billing = options.billing
    this.#now = options.now
    this.#leaseMs = options.leaseMs
    this.#onReplay = options.onReplay
    this.#unended = new UnendedClaims(options.store, options.endLeaseRetryMs)
  }

  /** Keyed operations running now (claimed or claiming, no outcome yet). */
  get running(): number {
    return this.#running
  }

  /** Claims given up on whose lease could not be ended yet (the store failed). */
  get unendedClaims(): number {
    return this.#unended.size
  }

  async execute(op: KeyedOperation): Promise<ToolAnswer> {
    this.#running++
    try {
      return await this.#execute(op)
    } finally {
      this.#running--
    }
  }

  async #execute(op: KeyedOperation): Promise<ToolAnswer> {
    const { key, fingerprint } = op
    const owner = `${this.#instance}:${++this.#seq}`
    const request: ClaimRequest = {
      key,
      fingerprint,
      operation: op.operation,
      targetRef: op.targetRef,
      owner,
      nowMs: this.#now(),
      leaseMs: this.#leaseMs,
    }
    const recordOf: KeyRecordOf = (o) => ({ outcome: op.outcomeOf(o), nowMs: this.#now() })
    let claim: ClaimResult
    try {
      // Written as one, or not at all (a key seen before, a charge that moved…): then the usual path, which finds out.
      const inOneWrite = await op.claiming(request, recordOf)
      if (inOneWrite !== undefined) return answerOf(op.outcomeOf(inOneWrite))
      claim = await this.#store.claim(request)
    } catch (error) {
      // The claim may have committed although its answer was lost (the connection cut after the commit): nothing ran
      // under it, so its lease is ended (now, or once the store takes the write) for the retry to take it over.
      if (outageAnswer(error) !== undefined) void this.#unended.end(key, owner)
      throw error
    }
    this.#unended.storeAnswered()
    if (claim.kind === 'exists') return this.#replay(claim.row, fingerprint, true)
    let done: KeyedRun
    try {
      // A former owner's attempt left no outcome: billing may have acted on it, so ask before calling again.
      const found = claim.recovering ? await this.#billing.lookup(key) : undefined
      done = found !== undefined ? { outcome: found, finished: undefined } : await op.run(owner, recordOf)
    } catch (error) {
      // The billing call's fate is unknown: keep the claim (so nobody re-runs it blind) but end its lease, so the
      // next call with this key recovers through billing.lookup(key). The error goes to the call's log line.
      await this.#unended.end(key, owner)
      // The store's own outage (a demo ledger lives in it) says so; anything else is the billing system not answering.
      return (
        (error instanceof StoreError ? outageAnswer(error) : undefined) ?? {
          ...fail('unavailable', 'the billing system did not answer; retry with the same key', error),
          retryAfterSeconds: RETRY_AFTER_SECONDS.unreachable,
        }
      )
    }
    if (done === 'not_found') {
      await this.#store.release(key, owner)
      return notFound()
    }
    const outcome = op.outcomeOf(done.outcome)
    let recorded: boolean
    try {
      recorded = done.finished ?? (await this.#store.finish(key, owner, outcome, this.#now()))
    } catch (error) {
      // Billing acted but its outcome is not recorded (the store went away meanwhile): end the lease, as for a
      // billing failure, so the retry recovers through billing.lookup(key) instead of answering in_progress until the
      // lease runs out. In a full outage this fails too, and the lease is ended once the store takes writes again.
      await this.#unended.end(key, owner)
      const outage = outageAnswer(error)
      if (outage === undefined) throw error
      return outage
    }
    if (!recorded) {
      // Our claim was taken over (lease ran out mid-call); answer what the winner recorded.
      const row = await this.#store.get(key)
      if (row === undefined) return fail('internal_error', 'the operation record vanished; retry with the same key')
      return this.#replay(row, fingerprint)
    }
    return answerOf(outcome)
  }

  async #replay(row: OperationRow, fingerprint: string, seenBefore = false): Promise<ToolAnswer> {
    const result = row.fingerprint !== fingerprint ? 'conflict' : row.status === 'running' ? 'in_progress' : 'replayed'
    if (seenBefore) this.#onReplay?.(row.operation, result)
    if (result === 'conflict') return fail('idempotency_conflict', 'this key was used with other parameters')
    if (result === 'in_progress') return inProgress()
    const current = row.status === 'pending' ? await this.refreshPending(row) : row
    return answerOf(current)
  }

  /** A pending operation's row, moved to its final outcome when the billing system reports one. */
  async refreshPending(row: OperationRow): Promise<OperationRow> {
    const found = await this.#billing.lookup(row.key)
    if (found === undefined || found.status === 'pending') return row
    await this.#store.settle(row.key, settledOutcome(row, found), this.#now())
    return (await this.#store.get(row.key)) ?? row
  }
}

function settledOutcome(row: OperationRow, found: Exclude<LookupOutcome, { status: 'pending' }>): Outcome {
  if (found.status === 'refused') {
    return { status: 'failed', result: null, refusal: { code: found.code, message: found.message } }
  }
  const result = row.result ?? {}
  if (found.operation === 'refund') {
    return {
      status: 'succeeded',
      refusal: null,
      result: { ...result, status: 'succeeded', refund_ref: found.refund_ref, processed_at: found.processed_at },
    }
  }
  return {
    status: 'succeeded',
    refusal: null,
    result: { ...result, status: 'succeeded', effective_at: found.effective_at },
  }
}

/** The answer a recorded outcome gives. */
export function answerOf(o: {
  status: string
  result: ContractObject | null
  refusal: { code: string; message: string } | null
}): ToolAnswer {
  if (o.status === 'failed' && o.refusal !== null) return fail(o.refusal.code, o.refusal.message)
  return ok(o.result ?? {})
}

/** The record of a refused billing outcome (the same for every operation), or undefined. */
export function refusalOutcome(o: LookupOutcome): Outcome | undefined {
  return o.status === 'refused'
    ? { status: 'failed', result: null, refusal: { code: o.code, message: o.message } }
    : undefined
}
