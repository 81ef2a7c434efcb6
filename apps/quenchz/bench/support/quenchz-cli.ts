// The quenchz CLI as the capacity bench runs it (compiled with this repository's sources into one plain JavaScript
// file, see spawn-server.ts): `main` with this process's arguments, as bin/quenchz-source.mjs runs it.
import { main } from '../../src/cli.js'

const outcome = await main(process.argv.slice(2))
if (typeof outcome === 'number') process.exitCode = outcome
