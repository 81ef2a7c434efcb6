// Runs the CLI from TypeScript sources (tests, development):
//   node --conditions=@tollgate/source --import tsx apps/quenchz/bin/quenchz-source.mjs --tokens-file …
import { exitQuietlyOnBrokenPipe } from '@tollgate/cli'
import { main } from '../src/cli.ts'

exitQuietlyOnBrokenPipe() // `quenchz … | head`: a reader that goes away stops the server quietly (exit 141)

const outcome = await main(process.argv.slice(2))
if (typeof outcome === 'number') process.exitCode = outcome
