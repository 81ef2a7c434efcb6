// providercheck as a function: the run the CLI makes, answered as the sealed report object, so a merchant's CI
// asserts on it (report.outcome, report.checks) without parsing verdict lines.
import type { CheckResult } from './check-types.js'
import { buildReport, type Report } from './report.js'
import { type KitOptions, runKit } from './run-kit.js'

export interface ProvidercheckOptions extends Omit<KitOptions, 'allowPrivate' | 'recordExchanges'> {
  /** Allow a base URL on a private or loopback address (a provider on your machine or in your CI). Default false. */
  allowPrivate?: boolean
  /** Keep what a failing check sent and received on its report entry (shortened, secrets scrubbed). Default true. */
  recordExchanges?: boolean
  /** Called as each check ends, in order. */
  onResult?: (result: CheckResult) => void
}

/**
 * Runs every check against a provider and answers the sealed report (the object `providercheck -json` writes;
 * `verifyReport(report, secret)` checks its seal). Never throws for a provider's faults — they are failing checks;
 * throws KitConfigError (before any request) for options the platform client refuses.
 */
export async function runProvidercheck(options: ProvidercheckOptions): Promise<Report> {
  const { onResult, allowPrivate, recordExchanges, ...rest } = options
  const run = await runKit(
    { ...rest, allowPrivate: allowPrivate ?? false, recordExchanges: recordExchanges ?? true },
    onResult,
  )
  return buildReport(run, { baseUrl: options.baseUrl, ...options.fixtures }, options.secret)
}
