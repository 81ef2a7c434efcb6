// A BillingPort of the test's own that forwards every method to another port: how a test serves the demo ledger's
// data in production, where startProvider refuses a DemoLedger instance (the demo ledger runs in the sandbox only).
import type { BillingPort } from '@tollgate/provider'

/** An object whose methods call `inner`'s (bound); not an instance of `inner`'s class. */
export function forwardingPort(inner: BillingPort): BillingPort {
  const out: Record<string, unknown> = {}
  for (let proto: object | null = inner; proto !== null && proto !== Object.prototype; ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value = (inner as unknown as Record<string, unknown>)[name]
      if (name !== 'constructor' && typeof value === 'function' && !(name in out)) out[name] = value.bind(inner)
    }
    proto = Object.getPrototypeOf(proto)
  }
  return out as unknown as BillingPort
}
