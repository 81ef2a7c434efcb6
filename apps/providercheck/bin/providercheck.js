#!/usr/bin/env node
// Committed shim: the compiled CLI lives in dist/ (built by `npm run build` / `npx tsc -b apps/providercheck`).
import '../dist/cli.js'
