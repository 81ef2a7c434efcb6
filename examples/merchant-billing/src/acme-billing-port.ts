// Acme's BillingPort: merchant-provider/v1 on top of Acme's own billing tables. This file is what a merchant
// writes: read methods translate rows into contract objects (ids as they are, cents → amount_minor, unix seconds
// → RFC 3339); refund() and cancelSubscription() are idempotent on the platform's key because the key is a
// UNIQUE column written in the same transaction as the change, and lookup(key) reads that column back.
import { randomUUID } from 'node:crypto'
import type {
  BillingPort,
  BillingRefusal,
  CancelCommand,
  CancelOutcome,
  Customer,
  CustomerCandidate,
  CustomerQuery,
  Describe,
  LookupOutcome,
  RefundCommand,
  RefundOutcome,
  Subscription,
  Transaction,
  TransactionList,
} from '@tollgate/provider'
import type { AccountRow, CancellationRow, PaymentRow, PlanRow, RefundRow } from './billing-db.js'
import type { Sql } from './sql.js'

/** Whole numbers only: BIGINT columns arrive as strings from pg. */
function int(value: number | string): number {
  const n = Number(value)
  if (!Number.isSafeInteger(n)) throw new RangeError('a billing row holds a number that is not a safe integer')
  return n
}
const iso = (unix: number | string): string => new Date(int(unix) * 1000).toISOString().replace('.000Z', 'Z')
const isoOrNull = (unix: number | string | null): string | null => (unix === null ? null : iso(unix))
const refused = (code: string, message: string): BillingRefusal => ({ status: 'refused', code, message })

const ACCOUNT_STATUS = { ok: 'active', frozen: 'restricted', closed: 'closed' } as const
const PAYMENT_STATE = { paid: 'succeeded', failed: 'failed', voided: 'canceled' } as const
const CHARGE_TYPE = { one_time: 'one_time', first: 'initial', renewal: 'renewal' } as const

export class AcmeBillingPort implements BillingPort {
  // refund() and cancelSubscription() apply the contract's generic refusals under the row lock themselves.
  readonly appliesGenericRefusals = true
  readonly #sql: Sql
  readonly #now: () => number

  /** now: unix seconds (injectable for tests). */
  constructor(sql: Sql, options: { now?: () => number } = {}) {
    this.#sql = sql
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000))
  }

  // The contract's types (generated from its JSON Schemas): a wrong field, type or a missing one fails tsc here.
  async describe(): Promise<Describe> {
    return {
      contract_version: '1.0',
      currencies: ['USD'],
      refunds_to_original_payment_method: true,
      capabilities: {
        partial_refunds: true,
        cancel_subscription: true,
        cancel_at_period_end: true,
        outcome_callbacks: false,
      },
    }
  }

  async findCustomers(query: CustomerQuery): Promise<CustomerCandidate[]> {
    const where: string[] = []
    const params: string[] = []
    const paymentHas = (column: string) =>
      `EXISTS (SELECT 1 FROM payments p WHERE p.account_id = a.id AND p.${column} = $${params.length})`
    for (const [field, value] of Object.entries(query)) {
      params.push(value)
      const n = params.length
      if (field === 'email') where.push(`lower(a.email) = lower($${n})`)
      else if (field === 'phone') where.push(`a.phone = $${n}`)
      else if (field === 'customer_ref') where.push(`a.id = $${n}`)
      else if (field === 'transaction_ref') where.push(paymentHas('id'))
      else if (field === 'order_ref') where.push(paymentHas('order_no'))
      else if (field === 'card_last4') where.push(paymentHas('card_last4'))
      else return []
    }
    const rows = await this.#sql.all<{ id: string }>(
      `SELECT a.id FROM accounts a WHERE ${where.join(' AND ')} ORDER BY a.id`,
      params,
    )
    return rows.map((r) => ({ customer_ref: r.id }))
  }

  async getCustomer(customerRef: string): Promise<Customer | undefined> {
    const account = await this.#sql.one<AccountRow>('SELECT * FROM accounts WHERE id = $1', [customerRef])
    if (account === undefined) return undefined
    const refunds = await this.#sql.all<RefundRow & { currency: string }>(
      `SELECT r.*, p.currency FROM payment_refunds r JOIN payments p ON p.id = r.payment_id
        WHERE p.account_id = $1 ORDER BY r.created_unix, r.id`,
      [customerRef],
    )
    return {
      customer_ref: account.id,
      emails: [account.email],
      phones: account.phone === null ? [] : [account.phone],
      account_status: ACCOUNT_STATUS[account.status],
      account_created_at: iso(account.opened_unix),
      prior_refunds: refunds.map((r) => refundRecord(r, r.currency)),
      prior_chargebacks: [],
    }
  }

  async listTransactions(customerRef: string): Promise<TransactionList | undefined> {
    const account = await this.#sql.one<{ id: string }>('SELECT id FROM accounts WHERE id = $1', [customerRef])
    if (account === undefined) return undefined
    const payments = await this.#sql.all<PaymentRow>(
      'SELECT * FROM payments WHERE account_id = $1 ORDER BY created_unix DESC, id',
      [customerRef],
    )
    const plans = await this.#sql.all<PlanRow>('SELECT * FROM plans WHERE account_id = $1 ORDER BY id', [customerRef])
    return {
      transactions: await Promise.all(payments.map((p) => this.#transaction(p, this.#sql))),
      subscriptions: await Promise.all(plans.map((p) => this.#subscription(p))),
    }
  }

  async getTransaction(transactionRef: string): Promise<Transaction | undefined> {
    const payment = await this.#sql.one<PaymentRow>('SELECT * FROM payments WHERE id = $1', [transactionRef])
    return payment === undefined ? undefined : this.#transaction(payment, this.#sql)
  }

  async getSubscription(subscriptionRef: string): Promise<Subscription | undefined> {
    const plan = await this.#sql.one<PlanRow>('SELECT * FROM plans WHERE id = $1', [subscriptionRef])
    return plan === undefined ? undefined : this.#subscription(plan)
  }

  async refund(idempotencyKey: string, command: RefundCommand): Promise<RefundOutcome> {
    return this.#sql.transaction(async (tx) => {
      // Lock the payment first: a second call with the same key waits here, then finds the first one's row.
      const payment = await tx.one<PaymentRow>(`SELECT * FROM payments WHERE id = $1${tx.forUpdate}`, [
        command.transaction_ref,
      ])
      const done = await tx.one<RefundRow>('SELECT * FROM payment_refunds WHERE request_key = $1', [idempotencyKey])
      if (done !== undefined) return { status: 'succeeded', refund_ref: done.id, processed_at: iso(done.created_unix) }
      if (payment === undefined) return { status: 'not_found' }
      const refusal = await this.#refundRefusal(tx, payment, command)
      if (refusal !== undefined) return refusal
      const id = `RFD-${randomUUID().slice(0, 8).toUpperCase()}`
      const at = this.#now()
      await tx.run('INSERT INTO payment_refunds VALUES ($1, $2, $3, $4, $5, NULL)', [
        id,
        payment.id,
        command.amount.amount_minor,
        at,
        idempotencyKey,
      ])
      return { status: 'succeeded', refund_ref: id, processed_at: iso(at) }
    })
  }

  async cancelSubscription(idempotencyKey: string, command: CancelCommand): Promise<CancelOutcome> {
    return this.#sql.transaction(async (tx) => {
      const plan = await tx.one<PlanRow>(`SELECT * FROM plans WHERE id = $1${tx.forUpdate}`, [command.subscription_ref])
      const done = await tx.one<CancellationRow>('SELECT * FROM plan_cancellations WHERE request_key = $1', [
        idempotencyKey,
      ])
      if (done !== undefined) return { status: 'succeeded', effective_at: isoOrNull(done.effective_unix) }
      if (plan === undefined) return { status: 'not_found' }
      if (plan.state === 'canceled' || (command.at_period_end && plan.ends_at_period_end === 1)) {
        return refused('already_canceled', 'the subscription is already canceled')
      }
      if (plan.state === 'paused') {
        return refused('subscription_not_active', 'the subscription cannot be canceled while it is paused')
      }
      if (command.at_period_end && plan.period_end_unix === null) {
        return refused('subscription_not_active', 'the subscription has no current period to end')
      }
      const now = this.#now()
      const effective = command.at_period_end ? int(plan.period_end_unix ?? now) : now
      if (command.at_period_end) await tx.run('UPDATE plans SET ends_at_period_end = 1 WHERE id = $1', [plan.id])
      else await tx.run("UPDATE plans SET state = 'canceled' WHERE id = $1", [plan.id])
      await tx.run('INSERT INTO plan_cancellations VALUES ($1, $2, $3, $4, $5)', [
        idempotencyKey,
        plan.id,
        command.at_period_end ? 1 : 0,
        effective,
        now,
      ])
      return { status: 'succeeded', effective_at: iso(effective) }
    })
  }

  async lookup(idempotencyKey: string): Promise<LookupOutcome | undefined> {
    const refund = await this.#sql.one<RefundRow>('SELECT * FROM payment_refunds WHERE request_key = $1', [
      idempotencyKey,
    ])
    if (refund !== undefined) {
      return { operation: 'refund', status: 'succeeded', refund_ref: refund.id, processed_at: iso(refund.created_unix) }
    }
    const cancel = await this.#sql.one<CancellationRow>('SELECT * FROM plan_cancellations WHERE request_key = $1', [
      idempotencyKey,
    ])
    if (cancel !== undefined) {
      return { operation: 'cancel_subscription', status: 'succeeded', effective_at: isoOrNull(cancel.effective_unix) }
    }
    return undefined
  }

  /** The contract's generic refusals, in the dry run's order, read inside the refund's transaction. */
  async #refundRefusal(tx: Sql, payment: PaymentRow, command: RefundCommand): Promise<BillingRefusal | undefined> {
    if (command.amount.currency !== payment.currency)
      return refused('currency_mismatch', 'the charge is in another currency')
    if (payment.status !== 'paid' || payment.disputed === 1)
      return refused('not_refundable', 'this charge cannot be refunded')
    const account = await tx.one<AccountRow>('SELECT * FROM accounts WHERE id = $1', [payment.account_id])
    if (account !== undefined && account.status !== 'ok') {
      return refused('account_restricted', 'the account is restricted; refunds are blocked')
    }
    const left = int(payment.amount_cents) - (await refundedCents(tx, payment.id))
    if (command.amount.amount_minor > left) {
      return refused('amount_exceeds_refundable', `only ${left} minor units are left to refund`)
    }
    return undefined
  }

  async #transaction(payment: PaymentRow, sql: Sql): Promise<Transaction> {
    const refunds = await sql.all<RefundRow>(
      'SELECT * FROM payment_refunds WHERE payment_id = $1 ORDER BY created_unix, id',
      [payment.id],
    )
    return {
      transaction_ref: payment.id,
      customer_ref: payment.account_id,
      order_ref: payment.order_no,
      subscription_ref: payment.plan_id,
      state: PAYMENT_STATE[payment.status],
      amount: { amount_minor: int(payment.amount_cents), currency: payment.currency },
      created_at: iso(payment.created_unix),
      description: null,
      product_type: payment.plan_id === null ? null : 'subscription',
      charge_type: CHARGE_TYPE[payment.kind],
      processor: 'acmepay',
      refund_route: 'provider' as const,
      card_last4: payment.card_last4,
      card_brand: payment.card_brand,
      disputed: payment.disputed === 1,
      refunds: refunds.map((r) => refundRecord(r, payment.currency)),
      settlement: null,
    }
  }

  async #subscription(plan: PlanRow): Promise<Subscription> {
    const last =
      plan.last_payment_id === null
        ? undefined
        : await this.#sql.one<PaymentRow>('SELECT * FROM payments WHERE id = $1', [plan.last_payment_id])
    return {
      subscription_ref: plan.id,
      customer_ref: plan.account_id,
      phase: plan.state,
      cancel_at_period_end: plan.ends_at_period_end === 1,
      current_period_end: isoOrNull(plan.period_end_unix),
      trial_end: null,
      billing_interval: { unit: 'month' as const, count: plan.interval_months },
      plan_ref: plan.plan_code,
      renewal_count: plan.renewals,
      created_at: iso(plan.created_unix),
      last_charge:
        last === undefined
          ? null
          : {
              transaction_ref: last.id,
              at: iso(last.created_unix),
              amount: { amount_minor: int(last.amount_cents), currency: last.currency },
            },
    }
  }
}

async function refundedCents(tx: Sql, paymentId: string): Promise<number> {
  const row = await tx.one<{ total: number | string | null }>(
    'SELECT SUM(amount_cents) AS total FROM payment_refunds WHERE payment_id = $1 AND reversed_unix IS NULL',
    [paymentId],
  )
  return row?.total === null || row?.total === undefined ? 0 : int(row.total)
}

function refundRecord(r: RefundRow, currency: string) {
  return {
    at: iso(r.created_unix),
    amount: { amount_minor: int(r.amount_cents), currency },
    idempotency_key: r.request_key,
    reversed_at: isoOrNull(r.reversed_unix),
  }
}
