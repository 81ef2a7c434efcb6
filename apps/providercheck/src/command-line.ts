/** The secret's environment variable (the seed's). */
export const SECRET_ENV = 'PROVIDERCHECK_SANDBOX_SIGNING_SECRET'

export interface RunCommand {
  kind: 'run'
  sandbox: true
  transport: 'mcp'
  allowPrivate: boolean
  baseUrl: string
  tenant: string
  customer: string
  transaction: string
  subscription: string
  json: string | undefined
  era: 'auto' | '2026-07-28' | 'legacy'
}

export type Command =
  | RunCommand
  | { kind: 'verify'; file: string }
  | { kind: 'help' }
  | { kind: 'usage_error'; message: string }

const VALUE_FLAGS = [
  'transport',
  'base-url',
  'tenant',
  'customer',
  'transaction',
  'subscription',
  'json',
  'era',
] as const
const BOOLEAN_FLAGS = ['sandbox', 'allow-private', 'h', 'help'] as const
const REQUIRED = ['transport', 'base-url', 'tenant', 'customer', 'transaction', 'subscription'] as const

export const USAGE = `usage: providercheck -sandbox -transport mcp [-allow-private] -base-url URL -tenant ID
                     -customer REF -transaction REF -subscription REF [-json FILE] [-era auto|2026-07-28|legacy]
       providercheck verify REPORT
       providercheck -h

Flags take one dash or two (-base-url or --base-url; -flag=value works too).
-transport mcp is the only transport so far (rest is not supported yet).
The signing secret comes from ${SECRET_ENV} (a sandbox secret, srmps_…).
Exit codes: 0 every check passed (or did not apply); 1 a check failed or was skipped because a check it
needs did not pass, or a report does not verify; 2 usage error.`

/** Parses the command line (without node and the script). Never throws. */
export function parseCommandLine(argv: readonly string[]): Command {
  if (argv[0] === 'verify') {
    if (argv.length !== 2 || argv[1] === undefined || argv[1].startsWith('-')) {
      return { kind: 'usage_error', message: 'verify takes one argument: the report file' }
    }
    return { kind: 'verify', file: argv[1] }
  }
  const values = new Map<string, string>()
  const flags = new Set<string>()
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string
    const match = /^--?([a-z][a-z-]*)(?:=(.*))?$/.exec(arg)
    if (!match) return { kind: 'usage_error', message: `unexpected argument ${JSON.stringify(arg)}` }
    const name = match[1] as string
    if ((BOOLEAN_FLAGS as readonly string[]).includes(name)) {
      if (match[2] !== undefined) return { kind: 'usage_error', message: `-${name} takes no value` }
      flags.add(name)
      continue
    }
    if (!(VALUE_FLAGS as readonly string[]).includes(name))
      return { kind: 'usage_error', message: `unknown flag -${name}` }
    const value = match[2] ?? argv[++i]
    if (value === undefined || value === '') return { kind: 'usage_error', message: `-${name} needs a value` }
    values.set(name, value)
  }
  if (flags.has('h') || flags.has('help')) return { kind: 'help' }
  const missing: string[] = REQUIRED.filter((f) => !values.has(f)).map((f) => `-${f}`)
  if (!flags.has('sandbox')) missing.unshift('-sandbox')
  if (missing.length > 0) return { kind: 'usage_error', message: `missing: ${missing.join(', ')}` }
  const transport = values.get('transport')
  if (transport === 'rest') {
    return {
      kind: 'usage_error',
      message: '-transport rest is not supported yet: this kit checks the MCP binding (-transport mcp)',
    }
  }
  if (transport !== 'mcp') return { kind: 'usage_error', message: '-transport must be mcp' }
  const era = values.get('era') ?? 'auto'
  if (era !== 'auto' && era !== '2026-07-28' && era !== 'legacy')
    return { kind: 'usage_error', message: '-era must be auto, 2026-07-28 or legacy' }
  return {
    kind: 'run',
    sandbox: true,
    transport: 'mcp',
    allowPrivate: flags.has('allow-private'),
    baseUrl: values.get('base-url') as string,
    tenant: values.get('tenant') as string,
    customer: values.get('customer') as string,
    transaction: values.get('transaction') as string,
    subscription: values.get('subscription') as string,
    json: values.get('json'),
    era,
  }
}
