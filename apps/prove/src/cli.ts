// `node dist/cli.js <manifest.json>`: proves a server that is already running.
import { proveFromManifest } from './prove.js'

process.exitCode = await proveFromManifest(
  process.argv[2],
  (l) => process.stdout.write(`${l}\n`),
  (l) => process.stderr.write(`${l}\n`),
)
