// Runs the CLI from source as its own process, as bin/quenchz.js runs the built one.
import { main } from '../../../src/cli.ts'

const outcome = await main(process.argv.slice(2))
if (typeof outcome === 'number') process.exitCode = outcome
