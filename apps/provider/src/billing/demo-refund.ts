// The demo ledger's documents and its refund: each refund is its own ledger row, written with the charge's running
// total, and the outcome the ledger stores under the refund's key.
import { randomUUID } from 'node:crypto'
import type { RefundRecord, Transaction } from '@tollgate/contract'
import { type RefundableCharge, refundRefusal } from '../rules/refusals.js'
import type { KeyRecordOf } from '../rules/same-transaction.js'
import type { LedgerMutation } from '../store/ledger-store.js'
import type { KeyFinish } from '../store/store.js'
import type { ChargeDoc, CustomerDoc } from './fixtures.js'
import type { BillingRefusal, ContractObject, LookupOutcome, RefundCommand } from './port.js'

export const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

/** Strips the ledger's private '_' fields from a document. */
export function publicView(doc: ContractObject): ContractObject {
  const out: ContractObject = {}
  for (const [k, v] of Object.entries(doc)) {
    if (k.startsWith('_')) continue
    out[k] = k === 'refunds' && Array.isArray(v) ? v.map((r) => publicView(r as ContractObject)) : v
  }
  return out
}

export type StoredOutcome = LookupOutcome & {
  transaction_ref?: string
  subscription_ref?: string
  settle_at?: number
  /** The ref of the refund's own ledger row (kind refundKind(transaction_ref)). */
  row_ref?: string
}

// Each refund is its own ledger row, written in the same transaction as the charge's running total
// (_refunded_minor). Keeping the refunds inside the charge document made every refund re-read and rewrite a document
// that grows with each refund (the bench's load pool reached tens of KiB per charge and most of a refund's CPU).
export const refundKind = (transactionRef: string) => `refund:${transactionRef}`

/**
 * A refund's ref: `re_`, the time in ms as 12 hex digits, then 48 random bits (24 hex digits in all). Time first, so
 * that an index keyed by refund ref takes each new refund at its end instead of at a random leaf page (measured when
 * the keys store had such an index: 3.55 → 2.76 SQLite WAL frames per refund). randomUUID draws from a cached entropy
 * pool (randomBytes per call showed in the profile).
 */
function timeOrderedRefundRef(nowMs: number): string {
  const random = randomUUID() // xxxxxxxx-xxxx-4xxx-…: its first 12 hex digits are random
  return `re_${Math.max(0, Math.trunc(nowMs)).toString(16).padStart(12, '0')}${random.slice(0, 8)}${random.slice(9, 13)}`
}

const REFUNDED = '_refunded_minor'

// The store keeps plain JSON documents; these are the documents fixtures.ts builds (each checked against its
// contract type there) and this ledger writes, so their type is restored where they are read back.
export const asCharge = (doc: ContractObject) => doc as unknown as ChargeDoc
const asRefundRecord = (doc: ContractObject) => doc as unknown as RefundRecord

/** The contract's transaction object: the charge's public fields and its refund rows (stored as contract fields). */
export function transactionView(doc: ContractObject, refundRows: readonly ContractObject[]): Transaction {
  const view = publicView(doc) as unknown as Transaction
  view.refunds = [...view.refunds, ...refundRows.map(asRefundRecord)]
  return view
}

/** The charge as the refund rules see it under the ledger's lock: its total refunded so far as one record. */
function withRefundedTotal(doc: ContractObject): RefundableCharge {
  const charge = asCharge(doc)
  const total = typeof doc[REFUNDED] === 'number' ? (doc[REFUNDED] as number) : 0
  return { ...charge, refunds: [...charge.refunds, { amount: { amount_minor: total }, reversed_at: null }] }
}

/**
 * A refund as a ledger mutation: the generic rules, the account and holds under the charge's lock, then the row. A
 * pending refund (charges with _refund_mode 'pending') settles settleAfterMs later.
 */
export function refundMutation(
  idempotencyKey: string,
  command: RefundCommand,
  nowMs: number,
  settleAfterMs: number,
): LedgerMutation<MutationOutcome> {
  return (doc, _prior, related) => {
    if (doc === undefined) return { outcome: { status: 'not_found' }, record: false }
    const customer = related?.[0]
    const hold = doc._hold as { code: string; message: string } | undefined
    // The dry run's order: the generic rules (the server's pre-check), then the account, then holds.
    const refusal: BillingRefusal | undefined =
      refundRefusal(withRefundedTotal(doc), undefined, command) ??
      refundRefusal(withRefundedTotal(doc), customer as CustomerDoc | undefined, command) ??
      (hold === undefined ? undefined : { status: 'refused', code: hold.code, message: hold.message })
    if (refusal !== undefined) return { outcome: { operation: 'refund', ...refusal } }
    const refundRef = timeOrderedRefundRef(nowMs)
    const pending = doc._refund_mode === 'pending'
    const at = iso(nowMs)
    const record = {
      at,
      amount: { amount_minor: command.amount.amount_minor, currency: command.amount.currency },
      idempotency_key: idempotencyKey,
      reversed_at: null,
    }
    // Rows list in creation order (time, then the random ref).
    const rowRef = `${String(nowMs).padStart(15, '0')}:${refundRef}`
    const refunded = (typeof doc[REFUNDED] === 'number' ? (doc[REFUNDED] as number) : 0) + command.amount.amount_minor
    const out: StoredOutcome = pending
      ? {
          operation: 'refund',
          status: 'pending',
          refund_ref: refundRef,
          transaction_ref: command.transaction_ref,
          settle_at: nowMs + settleAfterMs,
          row_ref: rowRef,
        }
      : { operation: 'refund', status: 'succeeded', refund_ref: refundRef, processed_at: at }
    return {
      doc: { ...doc, [REFUNDED]: refunded },
      put: [{ kind: refundKind(command.transaction_ref), ref: rowRef, doc: record }],
      outcome: out,
    }
  }
}

/** What the demo ledger's keyed mutations answer: the outcome it stores, or not_found (stored under no key). */
export type MutationOutcome = StoredOutcome | { status: 'not_found' }

/** The key's record of a mutation's outcome, as the server gives it; a charge not found records none. */
export const keyRecordOf =
  (recordOf: KeyRecordOf) =>
  (o: MutationOutcome): KeyFinish | undefined =>
    o.status === 'not_found' ? undefined : recordOf(stripOutcome(o))

export const alsoReadCustomer = (customerRef: string | undefined) =>
  customerRef === undefined ? {} : { alsoRead: [{ kind: 'customer', ref: customerRef }] }

export function stripOutcome(o: StoredOutcome): LookupOutcome {
  const { transaction_ref: _t, subscription_ref: _s, settle_at: _a, row_ref: _r, ...rest } = o
  return rest as LookupOutcome
}
