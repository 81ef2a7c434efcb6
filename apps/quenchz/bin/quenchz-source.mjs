// Runs the CLI from TypeScript sources (tests, development):
//   node --conditions=@tollgate/source --import tsx apps/quenchz/bin/quenchz-source.mjs --tokens-file …
import { main } from '../src/cli.ts'

const outcome = await main(process.argv.slice(2))
if (typeof outcome === 'number') process.exitCode = outcome
