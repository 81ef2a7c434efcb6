#!/usr/bin/env node
// The providercheck bin: a thin shell over main().
import { main } from './main.js'

const code = await main(process.argv.slice(2), process.env, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
})
process.exitCode = code
