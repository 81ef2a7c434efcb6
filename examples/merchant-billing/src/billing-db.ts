// Acme's billing database: its own tables, ids (ACC-…, PAY-…, PLN-…, RFD-…), cents and unix seconds. Nothing here
// knows about merchant-provider/v1; the port (acme-billing-port.ts) translates.
import type { Sql } from './sql.js'

const TABLES = [
  `CREATE TABLE IF NOT EXISTS accounts (
     id TEXT PRIMARY KEY, email TEXT NOT NULL, phone TEXT, status TEXT NOT NULL, opened_unix BIGINT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS payments (
     id TEXT PRIMARY KEY, account_id TEXT NOT NULL REFERENCES accounts(id), order_no TEXT, plan_id TEXT,
     amount_cents BIGINT NOT NULL, currency TEXT NOT NULL, created_unix BIGINT NOT NULL,
     status TEXT NOT NULL, kind TEXT NOT NULL, card_last4 TEXT, card_brand TEXT, disputed INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS payment_refunds (
     id TEXT PRIMARY KEY, payment_id TEXT NOT NULL REFERENCES payments(id), amount_cents BIGINT NOT NULL,
     created_unix BIGINT NOT NULL, request_key TEXT UNIQUE, reversed_unix BIGINT)`,
  `CREATE TABLE IF NOT EXISTS plans (
     id TEXT PRIMARY KEY, account_id TEXT NOT NULL REFERENCES accounts(id), plan_code TEXT NOT NULL,
     state TEXT NOT NULL, ends_at_period_end INTEGER NOT NULL, period_end_unix BIGINT,
     interval_months INTEGER NOT NULL, renewals INTEGER NOT NULL, created_unix BIGINT NOT NULL,
     last_payment_id TEXT)`,
  `CREATE TABLE IF NOT EXISTS plan_cancellations (
     request_key TEXT PRIMARY KEY, plan_id TEXT NOT NULL REFERENCES plans(id), at_period_end INTEGER NOT NULL,
     effective_unix BIGINT, created_unix BIGINT NOT NULL)`,
]

export async function createBillingTables(sql: Sql): Promise<void> {
  for (const statement of TABLES) await sql.run(statement)
}

export interface AccountRow {
  id: string
  email: string
  phone: string | null
  status: 'ok' | 'frozen' | 'closed'
  opened_unix: number | string
}

export interface PaymentRow {
  id: string
  account_id: string
  order_no: string | null
  plan_id: string | null
  amount_cents: number | string
  currency: string
  created_unix: number | string
  status: 'paid' | 'failed' | 'voided'
  kind: 'one_time' | 'first' | 'renewal'
  card_last4: string | null
  card_brand: string | null
  disputed: number
}

export interface RefundRow {
  id: string
  payment_id: string
  amount_cents: number | string
  created_unix: number | string
  request_key: string | null
  reversed_unix: number | string | null
}

export interface PlanRow {
  id: string
  account_id: string
  plan_code: string
  state: 'active' | 'paused' | 'canceled'
  ends_at_period_end: number
  period_end_unix: number | string | null
  interval_months: number
  renewals: number
  created_unix: number | string
  last_payment_id: string | null
}

export interface CancellationRow {
  request_key: string
  plan_id: string
  at_period_end: number
  effective_unix: number | string | null
  created_unix: number | string
}

const DAY = 86_400

/**
 * Demo rows: account ACC-1001 with a paid payment PAY-77001 ($49.99, a renewal of plan PLN-5001) and a roomy
 * one-time payment PAY-77002 ($5,000.00). `now` in unix seconds.
 */
export async function seedBillingDemo(sql: Sql, now = Math.floor(Date.now() / 1000)): Promise<void> {
  await sql.transaction(async (tx) => {
    await tx.run('INSERT INTO accounts VALUES ($1, $2, $3, $4, $5)', [
      'ACC-1001',
      'jane@example.com',
      '+15555550100',
      'ok',
      now - 400 * DAY,
    ])
    await tx.run('INSERT INTO plans VALUES ($1, $2, $3, $4, 0, $5, 1, 3, $6, $7)', [
      'PLN-5001',
      'ACC-1001',
      'pro_monthly',
      'active',
      now + 27 * DAY,
      now - 95 * DAY,
      'PAY-77001',
    ])
    const payment = 'INSERT INTO payments VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0)'
    await tx.run(payment, [
      'PAY-77001',
      'ACC-1001',
      'ORD-9001',
      'PLN-5001',
      4999,
      'USD',
      now - 3 * DAY,
      'paid',
      'renewal',
      '4242',
      'visa',
    ])
    await tx.run(payment, [
      'PAY-77002',
      'ACC-1001',
      'ORD-9002',
      null,
      500_000,
      'USD',
      now - DAY,
      'paid',
      'one_time',
      '4242',
      'visa',
    ])
  })
}

/** A new active monthly plan for ACC-1001 (for tests that cancel one each time). */
export async function openPlan(sql: Sql, id: string, now = Math.floor(Date.now() / 1000)): Promise<string> {
  await sql.run('INSERT INTO plans VALUES ($1, $2, $3, $4, 0, $5, 1, 0, $6, NULL)', [
    id,
    'ACC-1001',
    'pro_monthly',
    'active',
    now + 30 * DAY,
    now,
  ])
  return id
}
