// Internal: how a billing system whose data lives in the server's own store (the demo ledger) commits a keyed change
// together with the key's outcome. The rules receive it as an option (RulesOptions.sameTransaction); a merchant's
// BillingPort never sees it, and the server then records every outcome itself after the call.
import type { CancelCommand, LookupOutcome, RefundCommand } from '../billing/port.js'
import type { ClaimRequest, KeyFinish } from '../store/store.js'

/** The key's record of what a call did, as the server would record it after the call. */
export type KeyRecordOf = (outcome: LookupOutcome) => KeyFinish

/**
 * What a change committed with its key's claim answered. finished: true when the claim was finished with the change,
 * false when the change committed but the claim was no longer the caller's (taken over meanwhile), undefined when no
 * finish was made (the server finishes the claim itself).
 */
export interface FinishedWith {
  outcome: LookupOutcome
  finished: boolean | undefined
}

export interface SameTransactionCommit {
  /** BillingPort.refund, finishing the claim of `owner` with the change where it can. */
  refundFinishing(
    key: string,
    command: RefundCommand,
    owner: string,
    recordOf: KeyRecordOf,
  ): Promise<FinishedWith | 'not_found'>
  /** BillingPort.cancelSubscription, finishing the claim of `owner` with the change where it can. */
  cancelFinishing(
    key: string,
    command: CancelCommand,
    owner: string,
    recordOf: KeyRecordOf,
  ): Promise<FinishedWith | 'not_found'>
  /**
   * A refund under a key new to the server, with the key's claim and outcome, as one transaction (`claim` as the
   * server would make it). Answers undefined, having written nothing, when it cannot do all of that at once; the
   * server then claims, calls refundFinishing and records, as usual.
   */
  refundClaiming(
    key: string,
    command: RefundCommand,
    claim: ClaimRequest,
    recordOf: KeyRecordOf,
  ): Promise<LookupOutcome | undefined>
}
