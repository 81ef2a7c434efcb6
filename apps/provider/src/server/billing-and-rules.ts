// The billing system and the rules over it: the one step that constructs the ledger and the rules.
import type { Describe } from '@tollgate/contract'
import { DemoLedger } from '../billing/demo-ledger.js'
import type { BillingPort } from '../billing/port.js'
import { checkBillingPort } from '../billing/port-check.js'
import { listedTools, type ToolEntry } from '../mcp/tool-table.js'
import type { ProviderMetrics } from '../metrics.js'
import { ProviderRules } from '../rules/provider-rules.js'
import type { SameTransactionCommit } from '../rules/same-transaction.js'
import { demoLedgerStore } from '../store/ledger-store.js'
import type { Store } from '../store/store.js'
import type { ProviderOptions } from './options.js'

export interface BillingAndRules {
  billing: BillingPort
  /** What the port declares (checked): its capabilities choose the listed tools. */
  described: Describe
  rules: ProviderRules
  /** The tools listed: those the port's capabilities declare. */
  tools: readonly ToolEntry[]
}

/** A merchant's port is checked before anything listens (the demo ledger needs the store: billingAndRules checks it). */
export async function checkMerchantPort(options: ProviderOptions): Promise<Describe | undefined> {
  return options.billing === undefined ? undefined : await checkBillingPort(options.billing)
}

/**
 * The merchant's port, or the demo ledger (seeded, kept in `store`), checked (describe() valid and the port complete
 * for what it declares) before any call is served, and the rules over it (timed when there are metrics).
 * `checkedPort` is the merchant port's check made before listening.
 */
export async function billingAndRules(
  options: ProviderOptions,
  store: Store,
  checkedPort: Describe | undefined,
  metrics: ProviderMetrics | undefined,
  now: () => number,
): Promise<BillingAndRules> {
  let billing = options.billing
  // The demo ledger lives in this store: it records each key's outcome with its change.
  let sameTransaction: SameTransactionCommit | undefined
  if (billing === undefined) {
    const ledger = new DemoLedger(demoLedgerStore(store), { now, ...options.demoLedger })
    await ledger.seed()
    billing = ledger
    sameTransaction = metrics?.timedSameTransaction(ledger) ?? ledger
  }
  const described = checkedPort ?? (await checkBillingPort(billing))
  const rules = new ProviderRules({
    store: metrics?.timedStore(store) ?? store,
    billing: metrics?.timedBilling(billing) ?? billing,
    ...(sameTransaction !== undefined && { sameTransaction }),
    now,
    ...(options.inProgressLeaseMs !== undefined && { inProgressLeaseMs: options.inProgressLeaseMs }),
    ...(metrics !== undefined && { onReplay: (operation, result) => metrics.replayed(operation, result) }),
  })
  return { billing, described, rules, tools: listedTools(described.capabilities) }
}
