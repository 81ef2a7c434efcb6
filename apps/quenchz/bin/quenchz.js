#!/usr/bin/env node
// Installed as `quenchz`: the bundle of bin/quenchz-source.mjs (scripts/bundle.mjs; built by `npm ci`,
// `npm run build` and `npm pack`).
import '../bundle/bin/quenchz.mjs'
