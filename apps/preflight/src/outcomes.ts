// The preflight's observable surface: outcomes, their exit codes, and the one-line output form.

/** The checker's version, printed in every output line. */
export const VERSION = '0.1.0'

/** Every outcome the checker can report. */
export type Outcome =
  | 'consistent_sample'
  | 'usage'
  | 'mismatch'
  | 'pending'
  | 'failed'
  | 'rpc_error'
  | 'tool_error'
  | 'missing_receipt'
  | 'invalid_input'
  | 'invalid_envelope'
  | 'invalid_receipt'
  | 'internal_error'
  | 'out_of_scope'
  | 'input_io_error'

/** The single outcome → exit code table (the seed's "stable exit codes"). */
export const EXIT_CODES: Readonly<Record<Outcome, number>> = {
  consistent_sample: 0,
  usage: 0,
  mismatch: 1,
  pending: 1,
  failed: 1,
  rpc_error: 1,
  tool_error: 1,
  missing_receipt: 1,
  invalid_input: 2,
  invalid_envelope: 2,
  invalid_receipt: 2,
  internal_error: 2,
  out_of_scope: 3,
  input_io_error: 4,
}

/** What check/checkFile return and the CLI prints: no field ever holds an input value. */
export interface PreflightResult {
  readonly diagnostic: string
  readonly exit_code: number
  readonly outcome: Outcome
  readonly version: string
}

/** The exact stdout line: sorted keys, no spaces, then a newline. */
export function formatResult(result: PreflightResult): string {
  // Built field by field (not JSON.stringify of the object) so key order never depends on how it was made.
  return `{"diagnostic":${JSON.stringify(result.diagnostic)},"exit_code":${result.exit_code},"outcome":${JSON.stringify(result.outcome)},"version":${JSON.stringify(result.version)}}\n`
}
