// `quenchz tokens --tokens-file PATH [--token-lifetime S]`: fresh tokens from the key kept beside PATH.
import { resolve } from 'node:path'
import { flagHelp, readFlags } from '@tollgate/cli'
import { type CliIo, EXIT, usage } from './cli-io.js'
import { TOKENS_FLAGS } from './cli-options.js'
import { tokensPathRefusal } from './repository-guard.js'
import { issuerFromKeyFile, keyPathFor } from './signing-key.js'
import { buildTokenManifest, writeTokenManifest } from './token-manifest.js'

export const TOKENS_HELP = flagHelp(
  'usage: quenchz tokens --tokens-file PATH [--token-lifetime SECONDS]\n\nRewrites PATH with six fresh tokens signed by the key the running quenchz keeps beside it.',
  TOKENS_FLAGS,
)

const BIN = 'quenchz tokens'

export async function remintTokens(argv: readonly string[], io: CliIo, out: (line: string) => void): Promise<number> {
  const read = readFlags(argv, TOKENS_FLAGS)
  if ('help' in read) {
    out(TOKENS_HELP)
    return 0
  }
  if ('problem' in read) return usage(io, read.problem, BIN)
  if (!('values' in read)) return EXIT.usage
  const cwd = io.cwd ?? process.cwd()
  const file = read.values['tokens-file']
  if (file === undefined) return usage(io, '--tokens-file is required', BIN)
  const tokensPath = resolve(cwd, file)
  const refusal = tokensPathRefusal(tokensPath, cwd)
  if (refusal !== undefined) {
    io.stderr(refusal)
    return EXIT.refused
  }
  try {
    const { issuer, kept } = await issuerFromKeyFile(keyPathFor(tokensPath))
    const lifetimeSeconds = read.values['token-lifetime'] ?? kept.tokenLifetimeSeconds
    writeTokenManifest(
      tokensPath,
      await buildTokenManifest(issuer, kept.url, kept.clock, { resource: kept.resource, lifetimeSeconds }),
    )
    io.stderr(`tokens written to ${tokensPath} (valid ${lifetimeSeconds} s)`)
    return 0
  } catch (error) {
    io.stderr(`quenchz tokens: ${(error as Error).message}`)
    return EXIT.failed
  }
}
