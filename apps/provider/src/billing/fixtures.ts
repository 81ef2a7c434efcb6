// The demo ledger's data: the seed's Go example (cus_1001, ch_1001, sub_1001) and more fixtures covering every rule.
// Fields starting with '_' are the ledger's own (refund behaviour, holds) and never leave it.
import type { Customer, Money, PaymentAttempt, Subscription, Transaction } from '@tollgate/contract'
import type { LedgerDoc } from '../store/ledger-store.js'

/** The ledger's own fields on a charge document (never shown: publicView strips every '_' field). */
export interface ChargePrivate {
  /** 'pending': refunds answer pending and settle later (ch_3001). */
  _refund_mode: 'immediate' | 'pending'
  /** A merchant refusal every refund of this charge gets. */
  _hold?: { code: string; message: string }
}

/** A customer document: the contract's customer without prior_refunds, which the ledger computes from the charges. */
export type CustomerDoc = Omit<Customer, 'prior_refunds'>
/** A charge document: the contract's transaction plus the ledger's own fields. */
export type ChargeDoc = Transaction & ChargePrivate

// Built at runtime: keeps address-shaped literals out of the source.
const mail = (local: string) => `${local}\u0040example.com`

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

/** Builds the fixture documents with times relative to nowMs (as the Go example does). */
export function demoFixtures(nowMs: number): LedgerDoc[] {
  const days = (n: number) => iso(nowMs + n * 86_400_000)
  const usd = (amount_minor: number): Money => ({ amount_minor, currency: 'USD' })
  const eur = (amount_minor: number): Money => ({ amount_minor, currency: 'EUR' })
  // Each document is checked against its contract type (satisfies), so a fixture the contract refuses fails to
  // compile; the store keeps plain JSON documents.
  const customer = (ref: string, extra: Partial<CustomerDoc>) => ({
    kind: 'customer',
    ref,
    doc: {
      customer_ref: ref,
      emails: [],
      phones: [],
      account_status: 'active',
      account_created_at: '2025-03-02T10:15:00Z',
      prior_chargebacks: [],
      ...extra,
    } satisfies CustomerDoc,
  })
  const charge = (ref: string, extra: Partial<ChargeDoc>) => ({
    kind: 'transaction',
    ref,
    doc: {
      transaction_ref: ref,
      customer_ref: 'cus_1001',
      order_ref: null,
      subscription_ref: null,
      state: 'succeeded',
      amount: usd(1000),
      created_at: days(-3),
      description: null,
      product_type: null,
      charge_type: 'one_time',
      processor: 'in_house',
      refund_route: 'provider',
      card_last4: null,
      card_brand: null,
      disputed: false,
      refunds: [],
      settlement: null,
      _refund_mode: 'immediate',
      ...extra,
    } satisfies ChargeDoc,
  })
  const subscription = (ref: string, extra: Partial<Subscription>) => ({
    kind: 'subscription',
    ref,
    doc: {
      subscription_ref: ref,
      customer_ref: 'cus_1001',
      phase: 'active',
      cancel_at_period_end: false,
      current_period_end: days(27),
      trial_end: null,
      billing_interval: { unit: 'month', count: 1 },
      plan_ref: 'pro_monthly',
      renewal_count: 3,
      created_at: days(-93),
      last_charge: null,
      ...extra,
    } satisfies Subscription,
  })
  const attempt = (a: PaymentAttempt) => ({ kind: 'payment_attempt', ref: a.attempt_ref, doc: { ...a } })
  return [
    // The seed's Go example.
    customer('cus_1001', { emails: [mail('customer')] }),
    charge('ch_1001', {
      subscription_ref: 'sub_1001',
      amount: usd(4999),
      description: 'Pro plan, monthly',
      charge_type: 'renewal',
      card_last4: '4242',
      card_brand: 'visa',
    }),
    subscription('sub_1001', { last_charge: { transaction_ref: 'ch_1001', at: days(-3), amount: usd(4999) } }),
    // Another currency, a disputed charge and a canceled subscription.
    customer('cus_2001', {
      emails: [mail('amelie')],
      phones: ['+33612345678'],
      prior_chargebacks: [{ transaction_ref: 'ch_2002', at: days(-10), amount: eur(1500), status: 'open' }],
    }),
    charge('ch_2001', {
      customer_ref: 'cus_2001',
      order_ref: 'ord_2001',
      amount: eur(2500),
      card_last4: '1881',
      card_brand: 'mastercard',
      settlement: usd(2710),
      description: 'Annual add-on',
    }),
    charge('ch_2002', {
      customer_ref: 'cus_2001',
      amount: eur(1500),
      card_last4: '1881',
      card_brand: 'mastercard',
      disputed: true,
    }),
    subscription('sub_2001', {
      customer_ref: 'cus_2001',
      phase: 'canceled',
      current_period_end: null,
      plan_ref: 'basic_monthly',
      renewal_count: 0,
    }),
    // Refunds that the processor confirms later (pending, then settled by the ledger's clock).
    customer('cus_3001', { emails: [mail('pending')] }),
    charge('ch_3001', { customer_ref: 'cus_3001', amount: usd(7000), processor: 'paypal', _refund_mode: 'pending' }),
    subscription('sub_3001', {
      customer_ref: 'cus_3001',
      phase: 'paused',
      plan_ref: 'pro_yearly',
      billing_interval: { unit: 'year', count: 1 },
      renewal_count: 1,
    }),
    // A failed charge, and an app-store charge the provider cannot refund.
    customer('cus_4001', { emails: [mail('failed')] }),
    charge('ch_4001', {
      customer_ref: 'cus_4001',
      state: 'failed',
      amount: usd(1200),
      card_last4: '0002',
      card_brand: 'visa',
    }),
    charge('ch_4002', {
      customer_ref: 'cus_4001',
      amount: usd(999),
      processor: 'apple_app_store',
      refund_route: 'app_store',
    }),
    // Merchant-side refusals: a restricted account, a hold, and the merchant's own x_ rule.
    customer('cus_5001', { emails: [mail('restricted')], account_status: 'restricted' }),
    charge('ch_5001', { customer_ref: 'cus_5001', amount: usd(3000) }),
    customer('cus_6001', { emails: [mail('held')] }),
    charge('ch_6001', {
      customer_ref: 'cus_6001',
      amount: usd(5000),
      _hold: { code: 'merchant_hold', message: 'refunds of this charge are on hold' },
    }),
    charge('ch_6002', {
      customer_ref: 'cus_6001',
      amount: usd(2000),
      created_at: days(-400),
      _hold: { code: 'x_refund_window_closed', message: 'the merchant refunds within 365 days only' },
    }),
    // Payment attempts (payment_attempts capability): a success, a decline then a retry that worked, a pending one.
    ...(
      [
        ['pa_1001', 'cus_1001', 'sub_1001', 'ch_1001', 'succeeded', usd(4999), -3, null],
        ['pa_4001', 'cus_4001', null, 'ch_4001', 'failed', usd(1200), -2, 'card_declined'],
        ['pa_4002', 'cus_4001', null, null, 'failed', usd(1200), -1.5, 'insufficient_funds'],
        ['pa_2001', 'cus_2001', null, 'ch_2001', 'succeeded', eur(2500), -1, null],
        ['pa_3001', 'cus_3001', 'sub_3001', null, 'pending', usd(7000), -0.5, null],
      ] as const
    ).map(([attempt_ref, customer_ref, subscription_ref, transaction_ref, status, amount, at, failure_code]) =>
      attempt({
        attempt_ref,
        customer_ref,
        subscription_ref,
        transaction_ref,
        status,
        amount,
        attempted_at: days(at),
        updated_at: days(at),
        failure_code,
      }),
    ),
    // Roomy charges for tests and benchmarks that make many refunds (a pool, so no one charge piles up refunds).
    charge('ch_9001', { customer_ref: 'cus_1001', amount: usd(900_000_000), description: 'bulk test charge' }),
    customer('cus_9001', { emails: [mail('load')] }),
    ...Array.from({ length: 256 }, (_, i) =>
      charge(`ch_9${String(100 + i).padStart(3, '0')}`, {
        customer_ref: 'cus_9001',
        amount: usd(900_000_000),
        description: 'load test charge',
      }),
    ),
  ]
}
