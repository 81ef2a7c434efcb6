// The merchant-provider/v1 rules over a BillingPort and a Store: dry runs, idempotency (replay, conflict,
// in_progress), finality (pending → final), refusals, and exactly-once execution across crashes (keyed-execution.ts;
// refund.ts and cancel.ts are the keyed operations).
import type { BillingPort, CancelCommand, ContractObject, RefundCommand } from '../billing/port.js'
import type { OperationKind, OperationRow, Store } from '../store/store.js'
import { invalid, notFound, ok, type ToolAnswer } from './answers.js'
import { type CancelArgs, CancelOperation, cancelDryRun } from './cancel.js'
import { KeyedExecution } from './keyed-execution.js'
import { type RefundArgs, RefundOperation, refundDryRun } from './refund.js'
import type { SameTransactionCommit } from './same-transaction.js'

export type { CancelArgs } from './cancel.js'
export type { RefundArgs } from './refund.js'

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
  /**
   * Internal, for a billing system whose data lives in `store` itself (the demo ledger): it records each key's outcome
   * in the same transaction as its change. A merchant's billing system leaves this out.
   */
  sameTransaction?: SameTransactionCommit
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

/** Rules engine; one per server process. Every method answers, never throws for a client fault. */
export class ProviderRules {
  readonly #store: Store
  readonly #billing: BillingPort
  readonly #sameTransaction: SameTransactionCommit | undefined
  readonly #keyed: KeyedExecution

  constructor(options: RulesOptions) {
    this.#store = options.store
    this.#billing = options.billing
    this.#sameTransaction = options.sameTransaction
    const leaseMs = options.inProgressLeaseMs ?? 30_000
    const endLeaseRetryMs = options.endLeaseRetryMs ?? 500
    if (!Number.isInteger(leaseMs) || leaseMs < 1) throw new RangeError('inProgressLeaseMs must be a whole number ≥ 1')
    if (!Number.isInteger(endLeaseRetryMs) || endLeaseRetryMs < 1)
      throw new RangeError('endLeaseRetryMs must be a whole number ≥ 1')
    this.#keyed = new KeyedExecution({
      store: options.store,
      billing: options.billing,
      now: options.now ?? Date.now,
      leaseMs,
      endLeaseRetryMs,
      onReplay: options.onReplay,
    })
  }

  /** Claims this process gave up on whose lease it has not been able to end yet (the store failed). */
  get unendedClaims(): number {
    return this.#keyed.unendedClaims
  }

  /** Keyed operations this process is running now (claimed or claiming, no outcome yet). */
  get inProgress(): number {
    return this.#keyed.running
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
    if (dryRun) return refundDryRun(this.#billing, command)
    const key = args.idempotency_key as string
    return this.#keyed.execute(new RefundOperation(key, command, this.#billing, this.#sameTransaction))
  }

  async cancelSubscription(args: CancelArgs): Promise<ToolAnswer> {
    const { dry_run: dryRun, at_period_end, reason } = args.request
    const command: CancelCommand = { subscription_ref: args.subscription_ref, at_period_end, reason }
    const keyProblem = keyRule(args.idempotency_key, dryRun)
    if (keyProblem !== undefined) return keyProblem
    if (dryRun) return cancelDryRun(this.#billing, command)
    const key = args.idempotency_key as string
    return this.#keyed.execute(new CancelOperation(key, command, this.#billing, this.#sameTransaction))
  }

  /** sr_get_operation: what became of a key; pending operations are refreshed from the billing system. */
  async getOperation(key: string): Promise<ToolAnswer> {
    let row = await this.#store.get(key)
    if (row === undefined) return ok({ idempotency_key: key, status: 'unknown' })
    if (row.status === 'pending') row = await this.#keyed.refreshPending(row)
    return ok(operationView(row))
  }
}

function keyRule(key: string | undefined, dryRun: boolean): ToolAnswer | undefined {
  if (dryRun && key !== undefined) return invalid('a dry run carries no idempotency_key')
  if (!dryRun && key === undefined) return invalid('idempotency_key is required unless dry_run is true')
  return undefined
}

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
