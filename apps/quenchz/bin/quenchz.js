#!/usr/bin/env node
// The `quenchz` command: runs the built CLI (build first with `npx tsc -b apps/quenchz`).
import { main } from '../dist/cli.js'

const outcome = await main(process.argv.slice(2))
if (typeof outcome === 'number') process.exitCode = outcome
