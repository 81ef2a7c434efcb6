#!/usr/bin/env node
// Installed as `preflight`: the single-file CommonJS bundle (scripts/bundle.mjs; built by `npm ci`, `npm run build`
// and `npm pack`). CommonJS on purpose: preflight checks one file per process, and this starts without the ESM loader.
require('../bundle/bin/preflight.cjs')
