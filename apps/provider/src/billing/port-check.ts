// What startProvider checks of a BillingPort before it listens: describe() answers a valid describe object, and the
// port has every method the contract needs and every method a declared capability needs. Without it, an invalid
// describe surfaced later as a discovery 500, and a declared capability without its method as a 500 per call.
import { contractFaults, contractValidator, type Describe } from '@tollgate/contract'
import { DescribeInvalidError, PortIncompleteError } from '../errors.js'
import type { BillingPort } from './port.js'

const REQUIRED_METHODS = [
  'describe',
  'findCustomers',
  'getCustomer',
  'listTransactions',
  'getTransaction',
  'refund',
  'lookup',
] as const

/** The port methods each capability lists tools for. */
const CAPABILITY_METHODS: Readonly<Record<string, readonly string[]>> = {
  cancel_subscription: ['getSubscription', 'cancelSubscription'],
  payment_attempts: ['listPaymentAttempts'],
}

/**
 * Calls describe() once and checks it and the port; answers the describe object. Throws DescribeInvalidError
 * (ERR_PROVIDER_DESCRIBE_INVALID) or PortIncompleteError (ERR_PROVIDER_PORT_INCOMPLETE).
 */
export async function checkBillingPort(port: BillingPort): Promise<Describe> {
  const missingRequired = REQUIRED_METHODS.filter((m) => typeof port[m] !== 'function')
  if (missingRequired.length > 0) throw new PortIncompleteError(missingRequired.map((method) => ({ method })))
  const described: unknown = await port.describe()
  if (!contractValidator('describe.json')(described).valid) {
    throw new DescribeInvalidError(contractFaults('describe.json', described))
  }
  const capabilities = (described as Describe).capabilities
  const problems: { method: string; capability: string }[] = []
  for (const [capability, methods] of Object.entries(CAPABILITY_METHODS)) {
    if (capabilities[capability] !== true) continue
    for (const method of methods) {
      if (typeof (port as unknown as Record<string, unknown>)[method] !== 'function')
        problems.push({ method, capability })
    }
  }
  if (problems.length > 0) throw new PortIncompleteError(problems)
  return described as Describe
}
