#!/usr/bin/env node
// Shim: the built CLI lives in dist/ (npm run build).
import '../dist/fakemerchant.js'
