#!/usr/bin/env node
// Installed as `fakemerchant`: the bundle (scripts/bundle.mjs; built by `npm ci`, `npm run build` and `npm pack`).
import '../bundle/bin/fakemerchant.mjs'
