// `quenchz [--port 8931] --tokens-file PATH [...]`: the MCP server with an in-process issuer (or a real issuer's
// JWKS), and `quenchz tokens --tokens-file PATH`: fresh tokens for a running server. Each sub-command reads its flags
// from one table (@tollgate/cli); serving is a composition of named steps (server/serve.ts).
import { flagHelp, readFlags } from '@tollgate/cli'
import { type CliIo, usage } from './server/cli-io.js'
import { SERVE_FLAGS } from './server/cli-options.js'
import { DEFAULT_PORT, SERVER_INFO } from './server/constants.js'
import { remintTokens } from './server/remint.js'
import { serve } from './server/serve.js'
import { servePlan } from './server/serve-plan.js'

export { type CliIo, EXIT } from './server/cli-io.js'
export { logEvent } from './server/logging.js'
export { TOKENS_HELP } from './server/remint.js'
export { allowListOf } from './server/serve-steps.js'

/** This package's version: the literal the repository's version test pins to the root's (the installed bundle has
 * no package.json beside its code, so reading one at run time would fail there). */
export const VERSION: string = SERVER_INFO.version

export const HELP = flagHelp(
  `usage: quenchz --tokens-file PATH [options]      serve, minting tokens with an in-process issuer
       quenchz --jwks-url URL --issuer ISS [options]  serve, verifying a real issuer's tokens
       quenchz tokens --tokens-file PATH              fresh tokens for the quenchz serving with that file`,
  SERVE_FLAGS,
  `
With no --source, rates come from the ECB Data Portal (live), cached in SQLite. Offline:
  --source history --history eurofxref-hist.zip   (published at
  https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip) or --source recordings --recordings DIR.
Source: ECB statistics.`,
)

const defaultIo: CliIo = { stderr: (l) => process.stderr.write(`${l}\n`) }

/**
 * Runs the CLI. Resolves with an exit code on help, version, refusal or failure, with 0 when `serve` is false, and
 * with 'serving' once the server listens (it then runs until SIGINT/SIGTERM).
 */
export async function main(argv: readonly string[], io: CliIo = defaultIo): Promise<number | 'serving'> {
  const out = io.stdout ?? ((l: string) => process.stdout.write(`${l}\n`))
  if (argv[0] === 'tokens') return remintTokens(argv.slice(1), io, out)
  const read = readFlags(argv, SERVE_FLAGS)
  if ('help' in read || 'version' in read) {
    out('help' in read ? HELP : `quenchz ${VERSION}`)
    return 0
  }
  if ('problem' in read) return usage(io, read.problem)
  const cwd = io.cwd ?? process.cwd()
  const plan = servePlan(read.values, cwd, io.env ?? process.env)
  if ('problem' in plan) return usage(io, plan.problem)
  return serve(plan, io, cwd)
}

export { DEFAULT_PORT }
