#!/usr/bin/env node
// The providercheck bin: a thin shell over main(). Ctrl-C aborts the run: main() prints `interrupted`, writes the
// checks that ended as a partial report and answers 130; a second Ctrl-C exits at once.
import { exitQuietlyOnBrokenPipe } from '@tollgate/cli'
import { EXIT_INTERRUPTED, main } from './main.js'

// `providercheck call … | head`: a reader that stops early ends the run quietly (exit 141), not in a stack trace.
exitQuietlyOnBrokenPipe()

const interrupt = new AbortController()
process.once('SIGINT', () => {
  interrupt.abort()
  process.once('SIGINT', () => process.exit(EXIT_INTERRUPTED))
})

const code = await main(
  process.argv.slice(2),
  process.env,
  {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  },
  { signal: interrupt.signal },
)
// The interrupted check's request may still be open: do not wait for it (stdout/stderr writes are synchronous
// to files and pipes on POSIX, so nothing printed is lost).
if (code === EXIT_INTERRUPTED) process.exit(code)
process.exitCode = code
