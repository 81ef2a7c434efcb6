// `providercheck call`: curl for the contract. One call made exactly as the platform makes it (signed, correlation
// ids, strict reading, contract validation, retry then verify), printed for a person.

import { randomUUID } from 'node:crypto'
import { PROFILE_TOOLS } from '@tollgate/contract'
import { PlatformClient, PlatformClientError, UnexpectedHttpStatus } from '@tollgate/platform-client'
import { parsePlain } from '@tollgate/strict-json'
import { amountsIn } from './amounts.js'
import type { CallCommand } from './command-line.js'

/** Where call writes: one call per line, without the newline. */
export interface CallOutput {
  out(line: string): void
  err(line: string): void
}

/** Exit codes as the kit's: 0 a result, 1 anything else the provider answered (or failed to), 2 usage. */
export async function runCall(
  command: CallCommand,
  secret: string,
  bearerToken: string | undefined,
  io: CallOutput,
): Promise<number> {
  if (!PROFILE_TOOLS.some((t) => t.name === command.tool)) {
    io.err(`providercheck: call: TOOL must be a profile tool (${PROFILE_TOOLS.map((t) => t.name).join(', ')})`)
    return 2
  }
  let args: unknown
  try {
    // The platform's own strictness on input too: no duplicate keys, no 2000.0.
    args = parsePlain(Buffer.from(command.args, 'utf8'), { maxBytes: 1024 * 1024, maxDepth: 32, integersOnly: true })
  } catch {
    args = undefined
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    io.err(
      'providercheck: call: JSON-ARGS must be one strict JSON object (quote it: \'{"transaction_ref":"ch_1001"}\')',
    )
    return 2
  }
  let client: PlatformClient
  try {
    client = new PlatformClient({
      baseUrl: command.baseUrl,
      secret,
      transport: command.transport,
      allowPrivate: command.allowPrivate,
      era: command.era,
      eraCache: new Map(),
      ...(bearerToken !== undefined && { bearerToken }),
      ...(Object.keys(command.edgeHeaders).length > 0 && { edgeHeaders: command.edgeHeaders }),
    })
  } catch (error) {
    io.err(`providercheck: call: ${error instanceof Error ? error.message : 'bad options'}`)
    return 2
  }
  io.out(`call ${command.tool} over ${command.transport}: ${command.baseUrl}`)
  try {
    const out = await client.callTool(command.tool, args as Record<string, unknown>, {
      correlationId: randomUUID(),
      channel: 'ticket',
    })
    if (out.kind === 'verified') {
      io.out(`status: no answer after ${out.attempts} attempts (${out.lastFailure}); verified with sr_get_operation`)
      printBody(out.operation, io)
      return 1
    }
    const era = out.era === null ? '' : `, era ${out.era}`
    io.out(
      out.kind === 'result'
        ? `status: 200, outcome: result (${out.attempts} attempt${out.attempts === 1 ? '' : 's'}${era})`
        : `status: ${out.status}, outcome: error ${out.code}${out.retryable ? ' (retryable)' : ''} (${out.attempts} attempt${out.attempts === 1 ? '' : 's'}${era})`,
    )
    printBody(out.value, io)
    return out.kind === 'result' ? 0 : 1
  } catch (error) {
    if (!(error instanceof PlatformClientError)) throw error
    if (error instanceof UnexpectedHttpStatus) io.out(`status: ${error.status} (${error.phase})`)
    const hint = error.code === 'ERR_PLATFORM_BASE_URL' ? ' (a local server needs -allow-private)' : ''
    io.out(`outcome: refused by the platform's reader or network rules: ${error.code}: ${error.message}${hint}`)
    return 1
  }
}

function printBody(value: unknown, io: CallOutput): void {
  for (const line of JSON.stringify(value, null, 2).split('\n')) io.out(line)
  const amounts = amountsIn(value)
  if (amounts.length === 0) return
  io.out('amounts:')
  for (const a of amounts) io.out(`  ${a.path}: ${a.text}`)
}
