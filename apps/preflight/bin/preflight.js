#!/usr/bin/env node
// Installed as `preflight`; the CLI is compiled to dist/ by `npm ci` (prepare → tsc -b).
import '../dist/cli.js'
