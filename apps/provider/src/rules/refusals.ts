// The contract's generic refusal rules, from contract objects alone. The server applies them to dry runs and
// real calls; the demo ledger re-applies them under its row lock so concurrent keys cannot over-refund.
import type { Customer, Money, Subscription, Transaction } from '@tollgate/contract'
import type { BillingRefusal, CancelCommand, RefundCommand } from '../billing/port.js'

const refused = (code: string, message: string): BillingRefusal => ({ status: 'refused', code, message })

/** What the refund rules read of a charge: its amount, state, route, dispute flag and the refunds made so far. */
export interface RefundableCharge extends Pick<Transaction, 'amount' | 'state' | 'disputed' | 'refund_route'> {
  refunds: readonly { amount: Pick<Money, 'amount_minor'>; reversed_at: string | null }[]
}

/** Minor units still refundable on a charge: amount minus refunds not reversed (pending ones included). */
export function refundableMinor(transaction: Pick<RefundableCharge, 'amount' | 'refunds'>): number {
  let left = transaction.amount.amount_minor
  for (const r of transaction.refunds) {
    if (r.reversed_at === null) left -= r.amount.amount_minor
  }
  return left
}

/** The refusal a refund of this charge gets, or undefined. customer may be absent (unknown account state). */
export function refundRefusal(
  transaction: RefundableCharge,
  customer: Pick<Customer, 'account_status'> | undefined,
  command: RefundCommand,
): BillingRefusal | undefined {
  const money = transaction.amount
  if (command.amount.currency !== money.currency) {
    return refused('currency_mismatch', 'the charge is in another currency')
  }
  if (transaction.state !== 'succeeded' || transaction.disputed === true || transaction.refund_route !== 'provider') {
    return refused('not_refundable', 'this charge cannot be refunded')
  }
  if (customer !== undefined && customer.account_status !== 'active') {
    return refused('account_restricted', 'the account is restricted; refunds are blocked')
  }
  const left = refundableMinor(transaction)
  if (command.amount.amount_minor > left) {
    return refused('amount_exceeds_refundable', `only ${left} minor units are left to refund`)
  }
  return undefined
}

/** The refusal a cancellation of this subscription gets, or undefined. */
export function cancelRefusal(
  subscription: Pick<Subscription, 'phase' | 'cancel_at_period_end' | 'current_period_end'>,
  command: CancelCommand,
): BillingRefusal | undefined {
  const phase = subscription.phase
  if (
    phase === 'canceled' ||
    phase === 'expired' ||
    (command.at_period_end && subscription.cancel_at_period_end === true)
  ) {
    return refused('already_canceled', 'the subscription is already canceled')
  }
  if (phase === 'paused') {
    return refused('subscription_not_active', 'the subscription cannot be canceled while it is paused')
  }
  if (command.at_period_end && subscription.current_period_end === null) {
    return refused('subscription_not_active', 'the subscription has no current period to end')
  }
  return undefined
}
