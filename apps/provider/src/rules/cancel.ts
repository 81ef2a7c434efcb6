// sr_cancel_subscription on the keyed execution: its dry run and the cancellation as a keyed operation.
import type { BillingPort, CancelCommand, LookupOutcome } from '../billing/port.js'
import type { Outcome } from '../store/store.js'
import { fail, notFound, ok, type ToolAnswer } from './answers.js'
import { type KeyedOperation, type KeyedRun, refusalOutcome } from './keyed-execution.js'
import { cancelRefusal } from './refusals.js'
import type { KeyRecordOf, SameTransactionCommit } from './same-transaction.js'

export interface CancelArgs {
  idempotency_key?: string
  subscription_ref: string
  request: { at_period_end: boolean; reason: string; dry_run: boolean }
}

/** A cancellation's dry run: what a real call would answer, without a key and without changing anything. */
export async function cancelDryRun(billing: BillingPort, command: CancelCommand): Promise<ToolAnswer> {
  const sub = await billing.getSubscription(command.subscription_ref)
  if (sub === undefined) return notFound()
  const refusal = cancelRefusal(sub, command) ?? (await billing.assessCancel?.(command))
  if (refusal !== undefined) return fail(refusal.code, refusal.message)
  return ok({
    idempotency_key: null,
    status: 'would_succeed',
    subscription_ref: command.subscription_ref,
    at_period_end: command.at_period_end,
    effective_at: null,
  })
}

export class CancelOperation implements KeyedOperation {
  readonly key: string
  readonly fingerprint: string
  readonly command: CancelCommand
  readonly #billing: BillingPort
  readonly #commit: SameTransactionCommit | undefined

  constructor(key: string, command: CancelCommand, billing: BillingPort, commit: SameTransactionCommit | undefined) {
    this.key = key
    this.command = command
    this.fingerprint = JSON.stringify([
      'cancel_subscription',
      command.subscription_ref,
      command.at_period_end,
      command.reason,
    ])
    this.#billing = billing
    this.#commit = commit
  }

  get operation(): 'cancel_subscription' {
    return 'cancel_subscription'
  }

  get targetRef(): string {
    return this.command.subscription_ref
  }

  async run(owner: string, recordOf: KeyRecordOf): Promise<KeyedRun> {
    const billing = this.#billing
    if (billing.appliesGenericRefusals !== true) {
      const sub = await billing.getSubscription(this.command.subscription_ref)
      if (sub === undefined) return 'not_found'
      const refusal = cancelRefusal(sub, this.command)
      if (refusal !== undefined) {
        return { outcome: { operation: 'cancel_subscription', ...refusal }, finished: undefined }
      }
    }
    // A billing system in this store's database (the demo ledger) records the outcome with its change.
    if (this.#commit !== undefined) return this.#commit.cancelFinishing(this.key, this.command, owner, recordOf)
    const done = await billing.cancelSubscription(this.key, this.command)
    if (done.status === 'not_found') return 'not_found'
    return { outcome: { operation: 'cancel_subscription', ...done }, finished: undefined }
  }

  outcomeOf(o: LookupOutcome): Outcome {
    const refused = refusalOutcome(o)
    if (refused !== undefined) return refused
    if (o.operation !== 'cancel_subscription' || o.status === 'refused')
      throw new TypeError('billing answered another operation')
    const c = this.command
    return {
      status: o.status,
      result: {
        idempotency_key: this.key,
        status: o.status,
        subscription_ref: c.subscription_ref,
        at_period_end: c.at_period_end,
        effective_at: o.status === 'succeeded' ? o.effective_at : null,
      },
      refusal: null,
    }
  }

  claiming(): undefined {
    return undefined
  }
}
