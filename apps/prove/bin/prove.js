#!/usr/bin/env node
// Installed as `prove`: proves a quenchz that is already running, from its token manifest (src/cli.ts, bundled by
// scripts/bundle.mjs; built by `npm ci`, `npm run build` and `npm pack`).
import '../bundle/bin/prove.mjs'
