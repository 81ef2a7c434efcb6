// The billing-system port: the one place a merchant replaces the demo ledger with calls to their own system.
// Objects are merchant-provider/v1 contract objects, typed by @tollgate/contract's generated types (field names as in
// the contract's schemas), so a number where the contract wants a timestamp, a missing field or an extra one fails to
// compile. The server still validates every object at run time: types are not proof.
import type {
  Customer,
  CustomerCandidate,
  CustomerQuery,
  Describe,
  Money,
  PaymentAttemptList,
  Subscription,
  Transaction,
  TransactionList,
} from '@tollgate/contract'

export type { Money }

/** A merchant-provider/v1 contract object as plain JSON, untyped (prefer the contract's types: Transaction, …). */
export type ContractObject = Record<string, unknown>

export interface RefundCommand {
  transaction_ref: string
  amount: Money
  reason: string
}

export interface CancelCommand {
  subscription_ref: string
  at_period_end: boolean
  reason: string
}

export interface PaymentAttemptQuery {
  updated_since: string
  cursor?: string
  /** Page size 1..1000; default 100. */
  limit?: number
}

export interface BillingRefusal {
  status: 'refused'
  /** A refusal code of the contract (amount_exceeds_refundable, merchant_hold, …) or the merchant's own x_…. */
  code: string
  message: string
}

export type RefundOutcome =
  | { status: 'succeeded'; refund_ref: string; processed_at: string }
  | { status: 'pending'; refund_ref: string }
  | BillingRefusal
  | { status: 'not_found' }

export type CancelOutcome =
  | { status: 'succeeded'; effective_at: string | null }
  | { status: 'pending' }
  | BillingRefusal
  | { status: 'not_found' }

export type LookupOutcome =
  | ({ operation: 'refund' } & Exclude<RefundOutcome, { status: 'not_found' }>)
  | ({ operation: 'cancel_subscription' } & Exclude<CancelOutcome, { status: 'not_found' }>)

/**
 * What the server needs from a billing system. Rules (idempotency, finality, dry runs, refusals by the contract's
 * generic checks) live in the server; the port executes and reports.
 *
 * Exactly-once contract: refund() and cancelSubscription() receive the platform's idempotency key and MUST be
 * idempotent on it (pass it to your processor as its idempotency key); lookup(key) MUST report what a keyed call
 * did (or undefined when the billing system never executed it). The server records the attempt before calling and
 * the outcome after, and after a crash asks lookup(key) before calling again.
 */
export interface BillingPort {
  /**
   * true when refund() and cancelSubscription() themselves apply the contract's generic refusals (currency, state,
   * dispute, refund route, refundable amount; canceled / paused subscription) atomically with the change, in the
   * same order as a dry run reports them. The server then skips its own unlocked pre-check (a read of the object)
   * before real calls; dry runs always use it. Default false: the server pre-checks every real call.
   */
  readonly appliesGenericRefusals?: boolean
  /** sr_describe's object; read once at start (checked against the schema and the port's methods there). */
  describe(): Promise<Describe>
  /** The customers matching every identifier given (at most 100). */
  findCustomers(query: CustomerQuery): Promise<CustomerCandidate[]>
  getCustomer(customerRef: string): Promise<Customer | undefined>
  listTransactions(customerRef: string): Promise<TransactionList | undefined>
  getTransaction(transactionRef: string): Promise<Transaction | undefined>
  getSubscription(subscriptionRef: string): Promise<Subscription | undefined>
  /** A dry run's merchant-specific refusal (holds, x_… rules), or undefined when it would go through. */
  assessRefund?(command: RefundCommand): Promise<BillingRefusal | undefined>
  assessCancel?(command: CancelCommand): Promise<BillingRefusal | undefined>
  refund(idempotencyKey: string, command: RefundCommand): Promise<RefundOutcome>
  cancelSubscription(idempotencyKey: string, command: CancelCommand): Promise<CancelOutcome>
  /** payment_attempts capability: one page, oldest update first; 'invalid_cursor' for a cursor it did not issue. */
  listPaymentAttempts?(query: PaymentAttemptQuery): Promise<PaymentAttemptList | 'invalid_cursor'>
  /** The current state of a keyed operation (pending ones may have become final), or undefined if never executed. */
  lookup(idempotencyKey: string): Promise<LookupOutcome | undefined>
}
