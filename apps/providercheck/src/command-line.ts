import { validateHeaderValue } from 'node:http'
import { flagHelp } from '@tollgate/cli'
import { CALL_FLAGS, RUN_FLAGS, readLongForm } from './command-flags.js'
import { BEARER_TOKEN_ENV, LIVE_SECRET_ENV, SECRET_ENV } from './credential-env.js'
import { parseReportCommand, type ReportPageCommand } from './report-command.js'

export { BEARER_TOKEN_ENV, LIVE_SECRET_ENV, SECRET_ENV }

export interface RunCommand {
  kind: 'run'
  /**
   * -sandbox: every check, data-changing ones included, with a sandbox secret. -live (issue 29 §4): a production
   * endpoint with a production secret, only the checks that change nothing.
   */
  environment: 'sandbox' | 'production'
  transport: 'mcp' | 'rest'
  allowPrivate: boolean
  baseUrl: string
  tenant: string
  /** Required with -sandbox; optional with -live (the reads of a fixture not given do not apply). */
  customer: string | undefined
  transaction: string | undefined
  subscription: string | undefined
  json: string | undefined
  /** -html FILE: the report as one self-contained HTML page. */
  html: string | undefined
  era: 'auto' | '2026-07-28' | 'legacy'
  /** -edge-header 'Name: value' (repeatable), in command-line order; values are never printed. */
  edgeHeaders: Record<string, string>
}

/** `providercheck call`: one call made exactly as the platform makes it (issue 8 §4). */
export interface CallCommand {
  kind: 'call'
  transport: 'mcp' | 'rest'
  allowPrivate: boolean
  baseUrl: string
  era: 'auto' | '2026-07-28' | 'legacy'
  edgeHeaders: Record<string, string>
  tool: string
  /** The JSON-ARGS text as given; main reads it strictly. */
  args: string
}

export type Command =
  | RunCommand
  | CallCommand
  | { kind: 'verify'; file: string }
  | ReportPageCommand
  | { kind: 'help' }
  | { kind: 'version' }
  /** `missing` lists the required flags absent (the message names them too), so a caller adds to it by its code. */
  | { kind: 'usage_error'; message: string; missing?: readonly string[] }

/** -live reads only the fixtures it is given: the workspace and the endpoint are all it needs. */
const REQUIRED_LIVE = ['transport', 'base-url', 'tenant'] as const
const REQUIRED = [...REQUIRED_LIVE, 'customer', 'transaction', 'subscription'] as const

export const USAGE = flagHelp(
  `usage: providercheck --sandbox --transport mcp|rest [--allow-private] --base-url URL --tenant ID
                     --customer REF --transaction REF --subscription REF [--json FILE] [--html FILE]
                     [--era auto|2026-07-28|legacy] [--edge-header 'Name: value' ...]
       providercheck --live --transport mcp|rest --base-url URL --tenant ID [--customer REF] [--transaction REF]
                     [--subscription REF] [--json FILE] [--html FILE] [--era …] [--edge-header …]
       providercheck call --transport mcp|rest [--allow-private] --base-url URL [--era …] [--edge-header …] TOOL 'JSON-ARGS'
       providercheck verify REPORT
       providercheck report REPORT -o FILE
       providercheck -h | --version

Flags take two dashes or one (--base-url or -base-url; --flag=value works too).`,
  RUN_FLAGS,
  `
--transport mcp: --base-url is the MCP endpoint (http://localhost:12112/mcp). --transport rest: --base-url is the base
URL the /v1/… routes hang from, a path prefix allowed (http://localhost:12112). --era applies to mcp only.
--json FILE writes the sealed report; --html FILE writes it as one self-contained HTML page (both are checked
writable before any request); 'providercheck report REPORT -o FILE' writes the page of an existing report.
call makes one signed call exactly as the platform does (TOOL is a profile tool, e.g. sr_get_transaction;
JSON-ARGS its MCP arguments, e.g. '{"transaction_ref":"ch_1001"}') and prints status, outcome and body.
The signing secret comes from ${SECRET_ENV} (a sandbox secret, srmps_…).
--live is the live contract check of a production endpoint: the secret comes from ${LIVE_SECRET_ENV} (a
production secret, srmp_…), and only what changes nothing runs (discovery, describe, mcp_profile, the reads of the
fixtures given, both dry runs, an unknown key's sr_get_operation, the signature checks): never a refund or a cancel.
A bearer token, when the provider requires one, comes from ${BEARER_TOKEN_ENV} (never a flag: a token on the
command line leaks into shell history and process lists); it is sent as Authorization: Bearer on every request.
--edge-header 'Name: value' (repeatable) sends an edge/WAF header on every request; protocol and signature headers
(Host, Authorization, Content-Type, Accept, Mcp-*, X-SupportRoute-*, …) are refused. Only header names are printed.
Exit codes: 0 every check passed (or did not apply); 1 a check failed or was skipped because a check it
needs did not pass (or its fixture was unsuitable), or a report does not verify; 2 usage error; 130 interrupted
(Ctrl-C: the checks that ended are written as a partial report).`,
).trimEnd()

/** Parses the command line (without node and the script). Never throws. */
export function parseCommandLine(argv: readonly string[]): Command {
  if (argv[0] === 'call') return parseCall(argv.slice(1))
  if (argv[0] === 'verify') {
    if (argv.length !== 2 || argv[1] === undefined || argv[1].startsWith('-')) {
      return { kind: 'usage_error', message: 'verify takes one argument: the report file' }
    }
    return { kind: 'verify', file: argv[1] }
  }
  if (argv[0] === 'report') return parseReportCommand(argv.slice(1))
  const read = readLongForm(argv, RUN_FLAGS)
  if ('help' in read || 'version' in read) return { kind: 'help' in read ? 'help' : 'version' }
  if ('message' in read) return { kind: 'usage_error', message: read.message }
  const { values, positionals } = read
  const edgeHeaders = edgeHeadersOf(values['edge-header'])
  if (typeof edgeHeaders === 'string') return { kind: 'usage_error', message: edgeHeaders }
  // Never echo what follows an edge header: it is most likely an unquoted header value.
  if (positionals[0]?.after === 'edge-header')
    return {
      kind: 'usage_error',
      message: "unexpected argument after --edge-header (quote it: --edge-header 'Name: value')",
    }
  if (positionals.length > 0)
    return { kind: 'usage_error', message: 'unexpected argument: this command takes flags only' }
  const live = values.live === true
  const missing: string[] = (live ? REQUIRED_LIVE : REQUIRED)
    .filter((f) => values[f] === undefined)
    .map((f) => `--${f}`)
  if (!live && values.sandbox !== true) missing.unshift('--sandbox')
  if (missing.length > 0) return { kind: 'usage_error', message: `missing: ${missing.join(', ')}`, missing }
  const binding = transportAndEra(values)
  if ('message' in binding) return { kind: 'usage_error', message: binding.message }
  if (!URL.canParse(values['base-url'] as string))
    return { kind: 'usage_error', message: '--base-url must be an absolute URL (https://host/path)' }
  if (values.json !== undefined && values.json === values.html)
    return { kind: 'usage_error', message: '--json and --html name the same file' }
  return {
    kind: 'run',
    environment: live ? 'production' : 'sandbox',
    transport: binding.transport,
    allowPrivate: values['allow-private'] === true,
    baseUrl: values['base-url'] as string,
    tenant: values.tenant as string,
    customer: values.customer,
    transaction: values.transaction,
    subscription: values.subscription,
    json: values.json,
    html: values.html,
    era: binding.era,
    edgeHeaders,
  }
}

/** --transport mcp|rest and --era (MCP only), shared by the kit's command line and `call`. */
function transportAndEra(values: {
  transport?: string
  era?: string
}): { transport: 'mcp' | 'rest'; era: 'auto' | '2026-07-28' | 'legacy' } | { message: string } {
  const transport = values.transport
  if (transport !== 'mcp' && transport !== 'rest') return { message: '--transport must be mcp or rest' }
  const era = values.era ?? 'auto'
  if (era !== 'auto' && era !== '2026-07-28' && era !== 'legacy')
    return { message: '--era must be auto, 2026-07-28 or legacy' }
  if (transport === 'rest' && values.era !== undefined) return { message: '--era applies to --transport mcp only' }
  return { transport, era }
}

/** `call` [flags] TOOL 'JSON-ARGS': the flags the kit's run shares, then exactly two positional arguments. */
function parseCall(argv: readonly string[]): Command {
  const read = readLongForm(argv, CALL_FLAGS)
  // The -h/--help convention of every Tollgate CLI holds after `call` too.
  if ('help' in read) return { kind: 'help' }
  if ('message' in read || 'version' in read)
    return { kind: 'usage_error', message: `call: ${'message' in read ? read.message : 'unknown flag --version'}` }
  const { values, positionals } = read
  const edgeHeaders = edgeHeadersOf(values['edge-header'])
  if (typeof edgeHeaders === 'string') return { kind: 'usage_error', message: edgeHeaders }
  const missing = (['transport', 'base-url'] as const).filter((f) => values[f] === undefined).map((f) => `--${f}`)
  if (positionals.length < 2) missing.push(positionals.length === 0 ? 'TOOL JSON-ARGS' : 'JSON-ARGS')
  if (missing.length > 0) return { kind: 'usage_error', message: `call: missing ${missing.join(', ')}` }
  // Never echo a positional argument: JSON-ARGS may hold customer data.
  if (positionals.length > 2) return { kind: 'usage_error', message: 'call takes TOOL and one JSON-ARGS (quote it)' }
  const binding = transportAndEra(values)
  if ('message' in binding) return { kind: 'usage_error', message: `call: ${binding.message}` }
  return {
    kind: 'call',
    transport: binding.transport,
    allowPrivate: values['allow-private'] === true,
    baseUrl: values['base-url'] as string,
    era: binding.era,
    edgeHeaders,
    tool: positionals[0]?.text as string,
    args: positionals[1]?.text as string,
  }
}

/** The edge headers in command-line order, or the first one's usage problem. */
function edgeHeadersOf(texts: readonly string[] | undefined): Record<string, string> | string {
  const headers = new Map<string, string>()
  for (const text of texts ?? []) {
    const problem = addEdgeHeader(headers, text)
    if (problem !== undefined) return problem
  }
  // fromEntries defines own properties, so even a header named __proto__ stays a plain entry.
  return Object.fromEntries(headers)
}

// An HTTP field name is a token (RFC 9110 §5.1); anything else could not be sent as one header.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** Adds one 'Name: value' to headers, or returns a usage message that names the header but never its value. */
function addEdgeHeader(headers: Map<string, string>, text: string): string | undefined {
  const colon = text.indexOf(':')
  const name = colon < 0 ? '' : text.slice(0, colon)
  if (!HEADER_NAME.test(name)) return "--edge-header must be 'Name: value' with a header name before the colon"
  const value = text.slice(colon + 1).trim()
  if (value === '') return `--edge-header ${name} has no value (quote it: --edge-header '${name}: value')`
  try {
    validateHeaderValue(name, value)
  } catch {
    return `--edge-header ${name}: the value holds characters a header cannot carry`
  }
  if (name.toLowerCase() === 'authorization')
    return `--edge-header ${name} is reserved: the bearer token comes from ${BEARER_TOKEN_ENV} (environment)`
  if ([...headers.keys()].some((n) => n.toLowerCase() === name.toLowerCase()))
    return `--edge-header ${name} is given twice`
  headers.set(name, value)
  return undefined
}
