// The options startProvider refuses before anything listens: secrets and their environment, the billing choice, the
// retention, the MCP path and the admin port.
import { SignatureVerifier, type SigningEnvironment, secretEnvironment } from '@tollgate/signing'
import { DemoLedger } from '../billing/demo-ledger.js'
import { DemoInProductionError, NoBillingError, NoSecretError } from '../errors.js'
import type { ProviderOptions } from './options.js'

/** The options startProvider derives before listening. */
export interface CheckedOptions {
  environment: SigningEnvironment
  /** Verifies every request's signature; setSecrets replaces its secrets. */
  verifier: SignatureVerifier
  retentionDays: number
  path: string
  adminPort: number | undefined
}

/** Throws NoSecretError, DemoInProductionError, NoBillingError, TypeError or RangeError on options that cannot start. */
export function checkProviderOptions(options: ProviderOptions): CheckedOptions {
  const secrets = options.secrets.filter((s) => s !== '')
  if (secrets.length === 0) throw new NoSecretError()
  const environment = options.environment ?? secretEnvironment(secrets[0] as string)
  if (environment === undefined)
    throw new RangeError('a signing secret starts with srmps_ (sandbox) or srmp_ (production)')
  const verifier = new SignatureVerifier({ environment, secrets })
  checkBillingChoice(options, environment)
  const retentionDays = options.retentionDays ?? 30
  if (!Number.isInteger(retentionDays) || retentionDays < 30)
    throw new RangeError('retentionDays must be a whole number ≥ 30')
  const path = options.path ?? '/mcp'
  if (!path.startsWith('/')) throw new RangeError("path must start with '/'")
  const { adminPort } = options
  if (adminPort !== undefined && (!Number.isInteger(adminPort) || adminPort < 0 || adminPort > 65535))
    throw new RangeError('adminPort must be a whole number from 0 to 65535')
  return { environment, verifier, retentionDays, path, adminPort }
}

/**
 * The billing system is chosen, never defaulted: the merchant's `billing`, or the demo ledger asked for by name
 * (`demoLedger`) in the sandbox. The demo ledger's invented customers and refunds never answer production traffic.
 */
function checkBillingChoice(options: ProviderOptions, environment: SigningEnvironment): void {
  const { billing, demoLedger } = options
  if (demoLedger !== undefined && (typeof demoLedger !== 'object' || demoLedger === null || Array.isArray(demoLedger)))
    throw new TypeError('demoLedger must be an object of DemoLedgerOptions ({} for the defaults)')
  // Two billing systems for one server: which one answers would be a guess (a type mistake, not a bad value).
  if (billing !== undefined && demoLedger !== undefined)
    throw new TypeError(
      'pass either billing or demoLedger, not both: demoLedger starts the demo ledger in place of billing',
    )
  if (environment === 'production' && (billing === undefined || billing instanceof DemoLedger))
    throw new DemoInProductionError()
  if (billing === undefined && demoLedger === undefined) throw new NoBillingError()
}
