// The key store's statements on the operations table that the demo ledger's store also makes inside its own (a claim
// inserted, a claim finished), and the columns they read: one text each, shared by both stores.
import type { Columns } from './postgres-columns.js'
import { type ClaimRequest, jsonOrNull, type KeyFinish } from './store.js'

/** What a claim's row takes from a source aliased x where the source has no such column. */
interface Given {
  status?: string
  result?: string
  refusal?: string
  lease_until?: string
}

/**
 * Inserts the operations rows of the row source `x` (key, fingerprint, operation, target_ref, owner, at, and status,
 * result, refusal, lease_until unless given). A key already there is skipped (ON CONFLICT waits for a concurrent insert
 * of the key, then skips).
 */
export function insertOperations(s: string, source: string, given: Given): string {
  const value = (column: keyof Given) => given[column] ?? `x.${column}`
  return `INSERT INTO ${s}.operations (key, fingerprint, operation, target_ref, status, result, refusal, owner,
          lease_until, created_at, updated_at)
        SELECT x.key, x.fingerprint, x.operation, x.target_ref, ${value('status')}, ${value('result')},
          ${value('refusal')}, x.owner, ${value('lease_until')}, x.at, x.at
        FROM ${source}
        ON CONFLICT (key) DO NOTHING`
}

/**
 * Finishes the claims of the row source `f` (owner, status, result, refusal, at; the key is `key`): only a claim still
 * running and still that owner's.
 */
export function finishOperations(s: string, source: string, key = 'f.key'): string {
  return `UPDATE ${s}.operations o SET status = f.status, result = f.result, refusal = f.refusal, updated_at = f.at,
          lease_until = 0
        FROM ${source}
        WHERE o.key = ${key} AND o.owner = f.owner AND o.status = 'running'`
}

/** A claim's columns (the key's parameters and its owner). */
export const claimColumns = <T>(claimOf: (row: T) => ClaimRequest): Columns<T> => ({
  key: ['text', (r) => claimOf(r).key],
  fingerprint: ['text', (r) => claimOf(r).fingerprint],
  operation: ['text', (r) => claimOf(r).operation],
  target_ref: ['text', (r) => claimOf(r).targetRef],
  owner: ['text', (r) => claimOf(r).owner],
})

/** A key's recorded outcome as columns: status, result, refusal (JSON text), the time. */
export const finishColumns = <T>(finishOf: (row: T) => KeyFinish): Columns<T> => ({
  status: ['text', (r) => finishOf(r).outcome.status],
  result: ['text', (r) => jsonOrNull(finishOf(r).outcome.result)],
  refusal: ['text', (r) => jsonOrNull(finishOf(r).outcome.refusal)],
  at: ['bigint', (r) => finishOf(r).nowMs],
})
