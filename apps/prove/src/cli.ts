// `prove MANIFEST.json`: proves a server that is already running (node dist/cli.js <manifest.json>).
import { PROVE_FLAGS, PROVE_HELP, readCommandLine } from './command-line.js'
import { EXIT, proveFromManifest } from './prove.js'

// `prove … | head`: a reader that stops early ends the run quietly (exit 141, as a shell reports SIGPIPE). Written out
// here rather than imported from @tollgate/cli: prove depends on nothing of the code it proves (test/source-rules).
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
    process.exit(141)
  })
const out = (l: string) => process.stdout.write(`${l}\n`)
const err = (l: string) => process.stderr.write(`${l}\n`)
const line = readCommandLine(
  process.argv.slice(2),
  {
    help: PROVE_HELP,
    table: PROVE_FLAGS,
    positionals: 1,
    takes: 'prove takes one MANIFEST.json',
  },
  { out, err },
)
if ('exit' in line) process.exitCode = line.exit
else if (line.values.positionals[0] === undefined) {
  err('prove: the token manifest is missing: prove MANIFEST.json')
  err('see prove --help')
  process.exitCode = EXIT.cannotRun
} else process.exitCode = await proveFromManifest(line.values.positionals[0], out, err)
