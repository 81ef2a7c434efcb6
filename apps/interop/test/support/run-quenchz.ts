// Runs the quenchz CLI from source as its own process (as bin/quenchz.js runs the built one).
import { runCli } from '@tollgate/quenchz'

const outcome = await runCli(process.argv.slice(2))
if (typeof outcome === 'number') process.exitCode = outcome
