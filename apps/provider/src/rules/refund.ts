// sr_refund on the keyed execution: its dry run, its pre-check, and the refund as a keyed operation.
import type { BillingPort, BillingRefusal, LookupOutcome, Money, RefundCommand } from '../billing/port.js'
import type { ClaimRequest, Outcome } from '../store/store.js'
import { fail, notFound, ok, type ToolAnswer } from './answers.js'
import { type KeyedOperation, type KeyedRun, refusalOutcome } from './keyed-execution.js'
import { refundRefusal } from './refusals.js'
import type { KeyRecordOf, SameTransactionCommit } from './same-transaction.js'

export interface RefundArgs {
  idempotency_key?: string
  request: RefundCommand & { dry_run: boolean }
}

// Generic rules only: account state, holds and x_ rules are the billing system's (assessRefund / refund), which
// keeps this read path to one lookup per call.
async function refundPrecheck(
  billing: BillingPort,
  command: RefundCommand,
): Promise<BillingRefusal | 'not_found' | undefined> {
  const tx = await billing.getTransaction(command.transaction_ref)
  if (tx === undefined) return 'not_found'
  return refundRefusal(tx, undefined, command)
}

/** A refund's dry run: what a real call would answer, without a key and without changing anything. */
export async function refundDryRun(billing: BillingPort, command: RefundCommand): Promise<ToolAnswer> {
  const refusal = await refundPrecheck(billing, command)
  if (refusal === 'not_found') return notFound()
  if (refusal !== undefined) return fail(refusal.code, refusal.message)
  const assessed = await billing.assessRefund?.(command)
  if (assessed !== undefined) return fail(assessed.code, assessed.message)
  return ok({
    idempotency_key: null,
    status: 'would_succeed',
    transaction_ref: command.transaction_ref,
    amount: command.amount,
    refund_ref: null,
  })
}

export class RefundOperation implements KeyedOperation {
  readonly key: string
  readonly fingerprint: string
  readonly command: RefundCommand
  readonly #billing: BillingPort
  readonly #commit: SameTransactionCommit | undefined

  constructor(key: string, command: RefundCommand, billing: BillingPort, commit: SameTransactionCommit | undefined) {
    this.key = key
    this.command = command
    this.fingerprint = JSON.stringify([
      'refund',
      command.transaction_ref,
      command.amount.amount_minor,
      command.amount.currency,
      command.reason,
    ])
    this.#billing = billing
    this.#commit = commit
  }

  get operation(): 'refund' {
    return 'refund'
  }

  get targetRef(): string {
    return this.command.transaction_ref
  }

  async run(owner: string, recordOf: KeyRecordOf): Promise<KeyedRun> {
    const billing = this.#billing
    if (billing.appliesGenericRefusals !== true) {
      const refusal = await refundPrecheck(billing, this.command)
      if (refusal === 'not_found') return 'not_found'
      if (refusal !== undefined) return { outcome: { operation: 'refund', ...refusal }, finished: undefined }
    }
    // A billing system in this store's database (the demo ledger) records the outcome with its change.
    if (this.#commit !== undefined) return this.#commit.refundFinishing(this.key, this.command, owner, recordOf)
    const done = await billing.refund(this.key, this.command)
    return done.status === 'not_found'
      ? 'not_found'
      : { outcome: { operation: 'refund', ...done }, finished: undefined }
  }

  outcomeOf(o: LookupOutcome): Outcome {
    const refused = refusalOutcome(o)
    if (refused !== undefined) return refused
    if (o.operation !== 'refund' || o.status === 'refused') throw new TypeError('billing answered another operation')
    const c = this.command
    const base = {
      idempotency_key: this.key,
      status: o.status,
      transaction_ref: c.transaction_ref,
      amount: money(c.amount),
      refund_ref: o.refund_ref,
    }
    const result = o.status === 'succeeded' ? { ...base, processed_at: o.processed_at } : base
    return { status: o.status, result, refusal: null }
  }

  claiming(claim: ClaimRequest, recordOf: KeyRecordOf): Promise<LookupOutcome | undefined> | undefined {
    // Only a billing system that applies the generic refusals itself: this path has no pre-check.
    if (this.#commit === undefined || this.#billing.appliesGenericRefusals !== true) return undefined
    return this.#commit.refundClaiming(this.key, this.command, claim, recordOf)
  }
}

const money = (m: Money): Money => ({ amount_minor: m.amount_minor, currency: m.currency })
