// The merchant-provider/v1 rules over a BillingPort and a Store: dry runs, idempotency (replay, conflict,
// in_progress), finality (pending → final), refusals, and exactly-once execution across crashes.
import { randomUUID } from 'node:crypto'
import type {
  BillingPort,
  BillingRefusal,
  CancelCommand,
  ContractObject,
  LookupOutcome,
  Money,
  RefundCommand,
  SameTransactionOutcome,
} from '../billing/port.js'
import { StoreError } from '../errors.js'
import { RETRY_AFTER_SECONDS } from '../store/outage.js'
import type { ClaimRequest, KeyFinish, OperationKind, OperationRow, Outcome, Store } from '../store/store.js'
import { fail, inProgress, invalid, notFound, ok, outageAnswer, type ToolAnswer } from './answers.js'
import { cancelRefusal, refundRefusal } from './refusals.js'

export interface RulesOptions {
  store: Store
  billing: BillingPort
  /** Clock in epoch ms. */
  now?: () => number
  /** How long a claimed key blocks other callers before it counts as abandoned by a crashed process. Default 30 000. */
  inProgressLeaseMs?: number
  /** Told of every keyed call whose key was already recorded (for metrics): what it came to. */
  onReplay?: (operation: OperationKind, result: 'replayed' | 'conflict' | 'in_progress') => void
  /**
   * How often a claim whose lease could not be ended (the store failed) is tried again while the store stays down.
   * Default 500. Every store call this process makes successfully also tries them at once.
   */
  endLeaseRetryMs?: number
}

/** Claims whose lease this process could not end that it keeps to end later; beyond, their leases end on their own. */
const MAX_UNENDED_CLAIMS = 100_000

export interface RefundArgs {
  idempotency_key?: string
  request: RefundCommand & { dry_run: boolean }
}

export interface CancelArgs {
  idempotency_key?: string
  subscription_ref: string
  request: { at_period_end: boolean; reason: string; dry_run: boolean }
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

/** A keyed operation for #execute: its key and fingerprint, what it is on, how to run it and record its outcome. */
type Execution = [
  key: string,
  fingerprint: string,
  operation: OperationKind,
  targetRef: string,
  run: (recovering: boolean, sameTransaction: SameTransactionOutcome) => Promise<LookupOutcome | 'not_found'>,
  toOutcome: (o: LookupOutcome) => { outcome: Outcome },
  /** A billing system in this store's database: claim, call and record as one write (BillingPort.refundClaiming). */
  claiming?: (
    claim: ClaimRequest,
    recordOf: (o: LookupOutcome) => KeyFinish,
  ) => Promise<LookupOutcome | undefined> | undefined,
]

/** Rules engine; one per server process. Every method answers, never throws for a client fault. */
export class ProviderRules {
  readonly #store: Store
  readonly #billing: BillingPort
  readonly #now: () => number
  readonly #leaseMs: number
  readonly #onReplay: RulesOptions['onReplay']
  #running = 0
  // Unique per process start, so a restarted process never mistakes a dead process's claim for its own.
  readonly #instance = randomUUID()
  #seq = 0
  /**
   * Claims of this process (key → owner) that it gave up on — their call was answered `unavailable` because the store
   * failed — and whose lease it could not end then (the same failure). Kept, and the lease ended as soon as the store
   * takes the write: a retry of the key (on any replica) then resumes it through billing.lookup within a second or
   * two instead of being answered in_progress until the lease runs out. Ending only this process's own claim (owner
   * matched in the statement) is what makes it safe: nothing of this process still runs the key, and a claim that
   * another replica took over meanwhile has another owner and is left alone.
   */
  readonly #unended = new Map<string, string>()
  readonly #endLeaseRetryMs: number
  #endingLeases: Promise<void> | undefined
  #endLeaseTimer: NodeJS.Timeout | undefined

  constructor(options: RulesOptions) {
    this.#store = options.store
    this.#billing = options.billing
    this.#now = options.now ?? Date.now
    this.#leaseMs = options.inProgressLeaseMs ?? 30_000
    this.#onReplay = options.onReplay
    this.#endLeaseRetryMs = options.endLeaseRetryMs ?? 500
    if (!Number.isInteger(this.#leaseMs) || this.#leaseMs < 1)
      throw new RangeError('inProgressLeaseMs must be a whole number ≥ 1')
    if (!Number.isInteger(this.#endLeaseRetryMs) || this.#endLeaseRetryMs < 1)
      throw new RangeError('endLeaseRetryMs must be a whole number ≥ 1')
  }

  /** Claims this process gave up on whose lease it has not been able to end yet (the store failed). */
  get unendedClaims(): number {
    return this.#unended.size
  }

  /**
   * Ends the lease of a claim this process gives up on without an outcome, so the next caller of the key recovers it
   * through billing.lookup. When the store fails, the claim is kept and ended later (see #unended).
   */
  async #endLease(key: string, owner: string): Promise<void> {
    try {
      await this.#store.abandon(key, owner)
    } catch (error) {
      if (outageAnswer(error) === undefined || this.#unended.size >= MAX_UNENDED_CLAIMS) return
      this.#unended.set(key, owner)
      this.#scheduleEndLeases(this.#endLeaseRetryMs)
    }
  }

  #scheduleEndLeases(delayMs: number): void {
    if (this.#endLeaseTimer !== undefined || this.#endingLeases !== undefined || this.#unended.size === 0) return
    this.#endLeaseTimer = setTimeout(() => {
      this.#endLeaseTimer = undefined
      void this.#endLeases()
    }, delayMs)
    this.#endLeaseTimer.unref()
  }

  /**
   * Tries the kept claims in order, stopping at the first failure (the store is still down: one failed statement
   * per round, not one per claim), and again after endLeaseRetryMs while some are left. A failure that is not an
   * outage (the store closed) drops the claim: its lease ends on its own.
   */
  #endLeases(): Promise<void> {
    if (this.#endingLeases !== undefined) return this.#endingLeases
    clearTimeout(this.#endLeaseTimer)
    this.#endLeaseTimer = undefined
    this.#endingLeases = (async () => {
      for (const [key, owner] of [...this.#unended]) {
        try {
          await this.#store.abandon(key, owner)
        } catch (error) {
          if (outageAnswer(error) !== undefined) break
        }
        if (this.#unended.get(key) === owner) this.#unended.delete(key)
      }
    })().finally(() => {
      this.#endingLeases = undefined
      this.#scheduleEndLeases(this.#endLeaseRetryMs)
    })
    return this.#endingLeases
  }

  /** Keyed operations this process is running now (claimed or claiming, no outcome yet). */
  get inProgress(): number {
    return this.#running
  }

  async describe(): Promise<ToolAnswer> {
    return ok(await this.#billing.describe())
  }

  async findCustomers(query: Record<string, string>): Promise<ToolAnswer> {
    if (Object.keys(query).length === 0) return invalid('give one or more known identifiers')
    return ok({ candidates: await this.#billing.findCustomers(query) })
  }

  async getCustomer(customerRef: string): Promise<ToolAnswer> {
    const c = await this.#billing.getCustomer(customerRef)
    return c === undefined ? notFound() : ok(c)
  }

  async listTransactions(customerRef: string): Promise<ToolAnswer> {
    const list = await this.#billing.listTransactions(customerRef)
    return list === undefined ? notFound() : ok(list)
  }

  async getTransaction(transactionRef: string): Promise<ToolAnswer> {
    const t = await this.#billing.getTransaction(transactionRef)
    return t === undefined ? notFound() : ok(t)
  }

  async listPaymentAttempts(query: { updated_since: string; cursor?: string; limit?: number }): Promise<ToolAnswer> {
    if (this.#billing.listPaymentAttempts === undefined) return notFound()
    const page = await this.#billing.listPaymentAttempts(query)
    return page === 'invalid_cursor' ? invalid('the cursor is not one this provider issued') : ok(page)
  }

  async getSubscription(subscriptionRef: string): Promise<ToolAnswer> {
    const s = await this.#billing.getSubscription(subscriptionRef)
    return s === undefined ? notFound() : ok(s)
  }

  async refund(args: RefundArgs): Promise<ToolAnswer> {
    const { dry_run: dryRun, ...rest } = args.request
    const command: RefundCommand = { transaction_ref: rest.transaction_ref, amount: rest.amount, reason: rest.reason }
    const keyProblem = keyRule(args.idempotency_key, dryRun)
    if (keyProblem !== undefined) return keyProblem
    if (dryRun) {
      const refusal = await this.#refundPrecheck(command)
      if (refusal === 'not_found') return notFound()
      if (refusal !== undefined) return fail(refusal.code, refusal.message)
      const assessed = await this.#billing.assessRefund?.(command)
      if (assessed !== undefined) return fail(assessed.code, assessed.message)
      return ok({
        idempotency_key: null,
        status: 'would_succeed',
        transaction_ref: command.transaction_ref,
        amount: command.amount,
        refund_ref: null,
      })
    }
    const key = args.idempotency_key as string
    const fingerprint = JSON.stringify([
      'refund',
      command.transaction_ref,
      command.amount.amount_minor,
      command.amount.currency,
      command.reason,
    ])
    return this.#execute(
      key,
      fingerprint,
      'refund',
      command.transaction_ref,
      async (recovering, sameTransaction) => {
        if (recovering) {
          const found = await this.#billing.lookup(key)
          if (found !== undefined) return found
        }
        if (this.#billing.appliesGenericRefusals !== true) {
          const refusal = await this.#refundPrecheck(command)
          if (refusal === 'not_found') return 'not_found'
          if (refusal !== undefined) return { operation: 'refund', ...refusal }
        }
        const done = await this.#billing.refund(key, command, sameTransaction)
        return done.status === 'not_found' ? 'not_found' : { operation: 'refund', ...done }
      },
      (o) => refundResult(key, command, o),
      // Only a billing system that applies the generic refusals itself: this path has no pre-check.
      this.#billing.refundClaiming === undefined || this.#billing.appliesGenericRefusals !== true
        ? undefined
        : (claim, recordOf) => this.#billing.refundClaiming?.(key, command, claim, recordOf),
    )
  }

  async cancelSubscription(args: CancelArgs): Promise<ToolAnswer> {
    const { dry_run: dryRun, at_period_end, reason } = args.request
    const command: CancelCommand = { subscription_ref: args.subscription_ref, at_period_end, reason }
    const keyProblem = keyRule(args.idempotency_key, dryRun)
    if (keyProblem !== undefined) return keyProblem
    if (dryRun) {
      const sub = await this.#billing.getSubscription(command.subscription_ref)
      if (sub === undefined) return notFound()
      const refusal = cancelRefusal(sub, command) ?? (await this.#billing.assessCancel?.(command))
      if (refusal !== undefined) return fail(refusal.code, refusal.message)
      return ok({
        idempotency_key: null,
        status: 'would_succeed',
        subscription_ref: command.subscription_ref,
        at_period_end,
        effective_at: null,
      })
    }
    const key = args.idempotency_key as string
    const fingerprint = JSON.stringify(['cancel_subscription', command.subscription_ref, at_period_end, reason])
    return this.#execute(
      key,
      fingerprint,
      'cancel_subscription',
      command.subscription_ref,
      async (recovering, sameTransaction) => {
        if (recovering) {
          const found = await this.#billing.lookup(key)
          if (found !== undefined) return found
        }
        if (this.#billing.appliesGenericRefusals !== true) {
          const sub = await this.#billing.getSubscription(command.subscription_ref)
          if (sub === undefined) return 'not_found'
          const refusal = cancelRefusal(sub, command)
          if (refusal !== undefined) return { operation: 'cancel_subscription', ...refusal }
        }
        const done = await this.#billing.cancelSubscription(key, command, sameTransaction)
        return done.status === 'not_found' ? 'not_found' : { operation: 'cancel_subscription', ...done }
      },
      (o) => cancelResult(key, command, o),
    )
  }

  /** sr_get_operation: what became of a key; pending operations are refreshed from the billing system. */
  async getOperation(key: string): Promise<ToolAnswer> {
    let row = await this.#store.get(key)
    if (row === undefined) return ok({ idempotency_key: key, status: 'unknown' })
    if (row.status === 'pending') row = await this.#refreshPending(row)
    return ok(operationView(row))
  }

  // Generic rules only: account state, holds and x_ rules are the billing system's (assessRefund / refund), which
  // keeps this read path to one lookup per call.
  async #refundPrecheck(command: RefundCommand): Promise<BillingRefusal | 'not_found' | undefined> {
    const tx = await this.#billing.getTransaction(command.transaction_ref)
    if (tx === undefined) return 'not_found'
    return refundRefusal(tx, undefined, command)
  }

  async #execute(...args: Execution): Promise<ToolAnswer> {
    this.#running++
    try {
      return await this.#executeCounted(...args)
    } finally {
      this.#running--
    }
  }

  async #executeCounted(
    ...[key, fingerprint, operation, targetRef, run, toOutcome, claiming]: Execution
  ): Promise<ToolAnswer> {
    const owner = `${this.#instance}:${++this.#seq}`
    const request = { key, fingerprint, operation, targetRef, owner, nowMs: this.#now(), leaseMs: this.#leaseMs }
    const recordOf = (o: LookupOutcome) => ({ ...toOutcome(o), nowMs: this.#now() })
    let claim: Awaited<ReturnType<Store['claim']>>
    try {
      // Written as one, or not at all (a key seen before, a charge that moved…): then the usual path, which finds out.
      const inOneWrite = await claiming?.(request, recordOf)
      if (inOneWrite !== undefined) return answerOf(toOutcome(inOneWrite).outcome)
      claim = await this.#store.claim(request)
    } catch (error) {
      // The claim may have committed although its answer was lost (the connection cut after the commit): nothing ran
      // under it, so its lease is ended (now, or once the store takes the write) for the retry to take it over.
      if (outageAnswer(error) !== undefined) void this.#endLease(key, owner)
      throw error
    }
    // The store answers: claims this process could not end during an outage are ended now.
    if (this.#unended.size > 0) void this.#endLeases()
    if (claim.kind === 'exists') return this.#replay(claim.row, fingerprint, true)
    // A billing system in this store's database (the demo ledger) records the outcome with its change.
    const sameTransaction: SameTransactionOutcome = { owner, recordOf }
    let done: LookupOutcome | 'not_found'
    try {
      done = await run(claim.recovering, sameTransaction)
    } catch (error) {
      // The billing call's fate is unknown: keep the claim (so nobody re-runs it blind) but end its lease, so the
      // next call with this key recovers through billing.lookup(key). The error goes to the call's log line.
      await this.#endLease(key, owner)
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
    const { outcome } = toOutcome(done)
    let recorded: boolean
    try {
      recorded = sameTransaction.finished ?? (await this.#store.finish(key, owner, outcome, this.#now()))
    } catch (error) {
      // Billing acted but its outcome is not recorded (the store went away meanwhile): end the lease, as for a
      // billing failure, so the retry recovers through billing.lookup(key) instead of answering in_progress until the
      // lease runs out. In a full outage this fails too, and the lease is ended once the store takes writes again.
      await this.#endLease(key, owner)
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
    const current = row.status === 'pending' ? await this.#refreshPending(row) : row
    return answerOf(current)
  }

  async #refreshPending(row: OperationRow): Promise<OperationRow> {
    const found = await this.#billing.lookup(row.key)
    if (found === undefined || found.status === 'pending') return row
    const result = row.result ?? {}
    let outcome: Outcome
    if (found.status === 'refused') {
      outcome = { status: 'failed', result: null, refusal: { code: found.code, message: found.message } }
    } else if (found.operation === 'refund') {
      outcome = {
        status: 'succeeded',
        refusal: null,
        result: { ...result, status: 'succeeded', refund_ref: found.refund_ref, processed_at: found.processed_at },
      }
    } else {
      outcome = {
        status: 'succeeded',
        refusal: null,
        result: { ...result, status: 'succeeded', effective_at: found.effective_at },
      }
    }
    const nowMs = this.#now()
    await this.#store.settle(row.key, outcome, nowMs)
    return (await this.#store.get(row.key)) ?? row
  }
}

function keyRule(key: string | undefined, dryRun: boolean): ToolAnswer | undefined {
  if (dryRun && key !== undefined) return invalid('a dry run carries no idempotency_key')
  if (!dryRun && key === undefined) return invalid('idempotency_key is required unless dry_run is true')
  return undefined
}

function answerOf(o: {
  status: string
  result: ContractObject | null
  refusal: { code: string; message: string } | null
}): ToolAnswer {
  if (o.status === 'failed' && o.refusal !== null) return fail(o.refusal.code, o.refusal.message)
  return ok(o.result ?? {})
}

function refusalOutcome(o: LookupOutcome): Outcome | undefined {
  return o.status === 'refused'
    ? { status: 'failed', result: null, refusal: { code: o.code, message: o.message } }
    : undefined
}

function refundResult(key: string, c: RefundCommand, o: LookupOutcome): { outcome: Outcome } {
  const refused = refusalOutcome(o)
  if (refused !== undefined) return { outcome: refused }
  if (o.operation !== 'refund' || o.status === 'refused') throw new TypeError('billing answered another operation')
  const base = {
    idempotency_key: key,
    status: o.status,
    transaction_ref: c.transaction_ref,
    amount: money(c.amount),
    refund_ref: o.refund_ref,
  }
  const result = o.status === 'succeeded' ? { ...base, processed_at: o.processed_at } : base
  return { outcome: { status: o.status, result, refusal: null } }
}

function cancelResult(key: string, c: CancelCommand, o: LookupOutcome): { outcome: Outcome } {
  const refused = refusalOutcome(o)
  if (refused !== undefined) return { outcome: refused }
  if (o.operation !== 'cancel_subscription' || o.status === 'refused')
    throw new TypeError('billing answered another operation')
  const effective = o.status === 'succeeded' ? o.effective_at : null
  return {
    outcome: {
      status: o.status,
      result: {
        idempotency_key: key,
        status: o.status,
        subscription_ref: c.subscription_ref,
        at_period_end: c.at_period_end,
        effective_at: effective,
      },
      refusal: null,
    },
  }
}

const money = (m: Money): Money => ({ amount_minor: m.amount_minor, currency: m.currency })

/** The operation object sr_get_operation answers for a known key. */
function operationView(row: OperationRow): ContractObject {
  const view: ContractObject = {
    idempotency_key: row.key,
    // The contract has no in_progress operation status: a call still running is pending (not final yet).
    status: row.status === 'running' ? 'pending' : row.status,
    operation: row.operation,
    target_ref: row.targetRef,
    updated_at: iso(row.updatedAtMs),
  }
  if (row.result !== null && (row.status === 'succeeded' || row.status === 'pending')) view.result = row.result
  if (row.refusal !== null) view.refusal = row.refusal
  return view
}
