// Claims this process gave up on without an outcome, whose lease it ends so that the next caller of the key recovers
// it through billing.lookup instead of waiting the lease out.
import type { Store } from '../store/store.js'
import { outageAnswer } from './answers.js'

/** Claims this process could not end that it keeps to end later; beyond, their leases end on their own. */
const MAX_UNENDED_CLAIMS = 100_000

/**
 * Ends leases, and keeps the claims (key → owner) whose lease it could not end because the store failed: their call
 * was answered `unavailable`, and the lease is ended as soon as the store takes the write — a retry of the key (on
 * any replica) then resumes it through billing.lookup within a second or two instead of being answered in_progress
 * until the lease runs out. Ending only this process's own claim (owner matched in the statement) is what makes it
 * safe: nothing of this process still runs the key, and a claim another replica took over meanwhile has another
 * owner and is left alone.
 */
export class UnendedClaims {
  readonly #store: Store
  readonly #retryMs: number
  readonly #kept = new Map<string, string>()
  #ending: Promise<void> | undefined
  #timer: NodeJS.Timeout | undefined

  constructor(store: Store, retryMs: number) {
    this.#store = store
    this.#retryMs = retryMs
  }

  /** How many claims are kept, their lease not ended yet. */
  get size(): number {
    return this.#kept.size
  }

  /** Ends a claim's lease now; when the store fails with an outage, keeps the claim and ends it later. */
  async end(key: string, owner: string): Promise<void> {
    try {
      await this.#store.abandon(key, owner)
    } catch (error) {
      if (outageAnswer(error) === undefined || this.#kept.size >= MAX_UNENDED_CLAIMS) return
      this.#kept.set(key, owner)
      this.#schedule(this.#retryMs)
    }
  }

  /** The store answered: the kept claims are ended now. */
  storeAnswered(): void {
    if (this.#kept.size > 0) void this.#endKept()
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== undefined || this.#ending !== undefined || this.#kept.size === 0) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      void this.#endKept()
    }, delayMs)
    this.#timer.unref()
  }

  /**
   * Tries the kept claims in order, stopping at the first failure (the store is still down: one failed statement
   * per round, not one per claim), and again after the retry delay while some are left. A failure that is not an
   * outage (the store closed) drops the claim: its lease ends on its own.
   */
  #endKept(): Promise<void> {
    if (this.#ending !== undefined) return this.#ending
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#ending = (async () => {
      for (const [key, owner] of [...this.#kept]) {
        try {
          await this.#store.abandon(key, owner)
        } catch (error) {
          if (outageAnswer(error) !== undefined) break
        }
        if (this.#kept.get(key) === owner) this.#kept.delete(key)
      }
    })().finally(() => {
      this.#ending = undefined
      this.#schedule(this.#retryMs)
    })
    return this.#ending
  }
}
