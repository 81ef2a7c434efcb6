// The demo ledger's own store: billing documents and the outcomes of keyed ledger mutations. It exists for the demo
// ledger (fakemerchant) only; a merchant's Store (store.ts) never carries it. It shares the keys store's database
// (same SQLite connection and group commit, same PostgreSQL pool), in tables of its own created on first use.
import type { ClaimRequest, KeyFinish, Store } from './store.js'

/** A ledger document (demo billing data). */
export interface LedgerDoc {
  kind: string
  ref: string
  doc: Record<string, unknown>
}

/** Result of a keyed ledger mutation: the first outcome for that key is stored and replayed. */
export interface LedgerApplyResult<R> {
  outcome: R
  replayed: boolean
  /**
   * With ApplyOptions.finish: true when the key's claim was finished in the mutation's transaction, false when the
   * mutation committed but the claim was no longer the owner's (taken over). Absent when no finish was attempted (a
   * replay, recordOf answered undefined, or the store's locking path, which leaves the finish to the caller).
   */
  finished?: boolean
}

/**
 * prior: the key's recorded outcome (rewrite only), read under the same lock as doc. related: the documents of
 * apply's alsoRead, in its order (undefined where missing), read in the same round trip.
 */
export type LedgerMutation<R> = (
  doc: Record<string, unknown> | undefined,
  prior?: R,
  related?: readonly (Record<string, unknown> | undefined)[],
) => {
  doc?: Record<string, unknown>
  outcome: R
  /** false: the outcome is not recorded under the key (e.g. not found) and the call may be repeated. */
  record?: boolean
  /** More documents to write (insert or replace) in the same transaction, e.g. one row per refund. */
  put?: readonly LedgerDoc[]
}

export interface ApplyOptions<R = unknown> {
  /** Other documents the mutation reads (passed as its third argument); read with the document, not locked. */
  alsoRead?: readonly { kind: string; ref: string }[]
  /**
   * Finish the provider's claim of the same key in the mutation's transaction (the ledger shares the keys store's
   * database): the change and the key's outcome commit together, one write instead of two (on PostgreSQL one round
   * trip less per refund), with no moment where one is committed without the other. recordOf maps the mutation's
   * outcome to the key's record (undefined: leave the claim running). A finished apply is durable when it returns.
   */
  finish?: { owner: string; recordOf(outcome: R): KeyFinish | undefined }
}

export interface ClaimingOptions<R> {
  /** As ApplyOptions.alsoRead. */
  alsoRead?: readonly { kind: string; ref: string }[]
  /** The key's record of the mutation's outcome; undefined: write nothing. */
  recordOf(outcome: R): KeyFinish | undefined
}

export interface DemoLedgerStore {
  readonly kind: 'sqlite' | 'postgres'
  /** Inserts documents that are not there yet (existing ones keep their state). */
  seed(docs: readonly LedgerDoc[]): Promise<void>
  get(kind: string, ref: string): Promise<Record<string, unknown> | undefined>
  /** Every document of a kind, ordered by ref. */
  list(kind: string): Promise<Record<string, unknown>[]>
  /**
   * get(kind, ref) and list(listKind) in one statement, from one snapshot (a charge and its refund rows): one round
   * trip on PostgreSQL, one read lock on SQLite (each statement outside a transaction takes and drops one: ~5 µs).
   */
  getWithList(
    kind: string,
    ref: string,
    listKind: string,
  ): Promise<{ doc: Record<string, unknown> | undefined; list: Record<string, unknown>[] }>
  /**
   * Atomically: if key has a recorded outcome replay it, else mutate the doc and record the outcome. mutate may run
   * more than once (PostgreSQL retries it when another writer changed the document meanwhile): keep it pure.
   * Durability: it returns once committed, possibly before it is on disk (PostgreSQL: before the WAL flush; SQLite
   * 'power-loss': before the WAL sync). It is on disk once any later waiting write on the same database returns —
   * the provider answers only after its key's finish, one such write; reads on SQLite wait for the sync too.
   */
  apply<R>(
    key: string,
    kind: string,
    ref: string,
    mutate: LedgerMutation<R>,
    options?: ApplyOptions<R>,
  ): Promise<LedgerApplyResult<R>>
  /**
   * A new key in one transaction (one statement on PostgreSQL): claims it for the server, applies the mutation and
   * records both outcomes (the ledger's, and the key's from recordOf) — a refund in one write. Only when the key is in
   * neither the keys store nor the ledger, the mutation records an outcome and recordOf gives the key's record; on
   * PostgreSQL the documents must also be known to this process (it read or wrote them last) and still as it knew
   * them. Otherwise nothing is written and it answers undefined: the caller takes the usual path (claim, apply,
   * finish), which also finds out why. Durable when it answers.
   */
  applyClaiming<R>(
    claim: ClaimRequest,
    kind: string,
    ref: string,
    mutate: LedgerMutation<R>,
    options: ClaimingOptions<R>,
  ): Promise<{ outcome: R } | undefined>
  /** The recorded outcome of a keyed mutation, if any. */
  lookup<R>(key: string): Promise<R | undefined>
  /** Replaces a key's recorded outcome and the doc in one transaction (pending settlement). */
  rewrite<R>(key: string, kind: string, ref: string, mutate: LedgerMutation<R>): Promise<R | undefined>
}

const factories = new WeakMap<Store, () => DemoLedgerStore>()
const opened = new WeakMap<Store, DemoLedgerStore>()

/** Internal: a store implementation tells how to build the ledger store on its database. */
export function attachLedgerStore(store: Store, factory: () => DemoLedgerStore): void {
  factories.set(store, factory)
}

/**
 * The demo ledger's store on the same database as `store` (one per store; closed with it). TypeError for a store
 * this package did not open (a custom Store has no ledger tables).
 */
export function demoLedgerStore(store: Store): DemoLedgerStore {
  const existing = opened.get(store)
  if (existing !== undefined) return existing
  const factory = factories.get(store)
  if (factory === undefined) throw new TypeError('store must come from openSqliteStore or openPostgresStore')
  const ledger = factory()
  opened.set(store, ledger)
  return ledger
}
