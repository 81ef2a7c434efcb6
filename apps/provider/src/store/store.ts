// The persistence contract shared by the SQLite and PostgreSQL stores (one test suite runs against both): a
// merchant's store holds idempotency keys, their outcomes and the server's refund records, nothing else. The demo
// ledger's documents live in a store of their own (ledger-store.ts).

/** A keyed operation's lifecycle: claimed (running) → final (succeeded | failed) or pending → final. */
export type OperationStatus = 'running' | 'pending' | 'succeeded' | 'failed'
export type OperationKind = 'refund' | 'cancel_subscription'

export interface Refusal {
  code: string
  message: string
}

/** One row per idempotency key the platform sent. Times are epoch milliseconds. */
export interface OperationRow {
  key: string
  fingerprint: string
  operation: OperationKind
  targetRef: string
  status: OperationStatus
  result: Record<string, unknown> | null
  refusal: Refusal | null
  owner: string
  leaseUntilMs: number
  createdAtMs: number
  updatedAtMs: number
}

export interface ClaimRequest {
  key: string
  fingerprint: string
  operation: OperationKind
  targetRef: string
  /** Identifies the claiming process/request; only the owner may finish a claim. */
  owner: string
  nowMs: number
  /** How long the claim blocks other callers of the key before it counts as abandoned (crash). */
  leaseMs: number
}

export type ClaimResult =
  /** Caller now owns the key. recovering: a former owner's attempt had no outcome (ask billing.lookup first). */
  | { kind: 'claimed'; recovering: boolean }
  /** The key exists: running under a live lease, or with an outcome. Caller compares fingerprints. */
  | { kind: 'exists'; row: OperationRow }

export interface Outcome {
  status: 'pending' | 'succeeded' | 'failed'
  result: Record<string, unknown> | null
  refusal: Refusal | null
}

/** A claim's outcome as it is recorded: what finish() takes, for a finish made inside another write (ledger-store.ts). */
export interface KeyFinish {
  outcome: Outcome
  nowMs: number
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres'
  /** Claims a key (INSERT … ON CONFLICT): at most one live owner per key across every process sharing the database. */
  claim(request: ClaimRequest): Promise<ClaimResult>
  /** Records the outcome of a claim. false when the claim was lost. */
  finish(key: string, owner: string, outcome: Outcome, nowMs: number): Promise<boolean>
  /** Ends a claim's lease without an outcome (billing failed mid-call): the next caller recovers via billing.lookup. */
  abandon(key: string, owner: string): Promise<void>
  /** Drops a running claim that recorded nothing (e.g. the target did not exist). */
  release(key: string, owner: string): Promise<void>
  /** Moves a pending operation to its final outcome (settlement). false when it was not pending. */
  settle(key: string, outcome: Outcome, nowMs: number): Promise<boolean>
  get(key: string): Promise<OperationRow | undefined>
  /** Deletes final operations last updated before cutoffMs; returns how many. */
  purge(cutoffMs: number): Promise<number>
  /**
   * How many operations are recorded as pending (for the metrics' gauge, read at most every 15 s). A scan of the
   * operations table: no index is kept on status, which would cost every claim and finish a write.
   */
  countPending?(): Promise<number>
  /**
   * Readiness: resolves when the database answers and takes a write (one row of its own table, rewritten), rejects
   * with the StoreError a call would get. A write, so a full disk or a read-only standby shows as not ready, and a
   * write that succeeds ends a recorded outage as a call's would.
   */
  probe(): Promise<void>
  /**
   * Calls `listener` whenever a store call finds the database unavailable (an outage begins): readiness drops its
   * cached answer then, so /readyz reports a switch that lasts less than its cache.
   */
  onOutage?(listener: () => void): void

  close(): Promise<void>
}

/**
 * An operations row (same columns on SQLite and PostgreSQL; PostgreSQL's BIGINTs arrive as strings) as the store's
 * OperationRow. result and refusal hold the JSON text as first written.
 */
export interface OperationsRow {
  key: string
  fingerprint: string
  operation: string
  target_ref: string
  status: string
  result: string | null
  refusal: string | null
  owner: string
  lease_until: number | string
  created_at: number | string
  updated_at: number | string
}

export function toOperation(row: OperationsRow): OperationRow {
  return {
    key: row.key,
    fingerprint: row.fingerprint,
    operation: row.operation as OperationRow['operation'],
    targetRef: row.target_ref,
    status: row.status as OperationRow['status'],
    result: row.result === null ? null : (JSON.parse(row.result) as Record<string, unknown>),
    refusal: row.refusal === null ? null : (JSON.parse(row.refusal) as OperationRow['refusal']),
    owner: row.owner,
    leaseUntilMs: Number(row.lease_until),
    createdAtMs: Number(row.created_at),
    updatedAtMs: Number(row.updated_at),
  }
}

/** A result or refusal as the JSON text the operations row keeps (null stays null). */
export const jsonOrNull = (v: unknown): string | null => (v === null ? null : JSON.stringify(v))
