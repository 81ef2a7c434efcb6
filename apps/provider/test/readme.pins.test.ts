// The README's error tables and the code agree; wire codes are pinned as literals.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { ERROR_CODES, REFUSAL_CODES } from '@tollgate/contract'
import { PROVIDER_ERROR_CODES } from '../src/index.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const errorsSection = readme.slice(readme.indexOf('## Errors'))

test('the README lists exactly the local error codes errors.ts defines', () => {
  const inReadme = [...errorsSection.matchAll(/`(ERR_PROVIDER_[A-Z_]+)`/g)].map((m) => m[1]).sort()
  assert.deepEqual(inReadme, [...PROVIDER_ERROR_CODES].sort())
  assert.deepEqual([...PROVIDER_ERROR_CODES].sort(), [
    'ERR_PROVIDER_DEMO_IN_PRODUCTION',
    'ERR_PROVIDER_DESCRIBE_INVALID',
    'ERR_PROVIDER_NO_BILLING',
    'ERR_PROVIDER_NO_SECRET',
    'ERR_PROVIDER_PORT_INCOMPLETE',
    'ERR_PROVIDER_SECRETS_EMPTY',
    'ERR_PROVIDER_SECRETS_ENVIRONMENT',
    'ERR_PROVIDER_SECRETS_FILE_UNREADABLE',
    'ERR_PROVIDER_SECRETS_TOO_MANY',
    'ERR_PROVIDER_SECRET_MALFORMED',
    'ERR_PROVIDER_STORE',
  ])
})

test("the README's wire table covers every contract error and refusal code", () => {
  for (const code of [...ERROR_CODES, ...REFUSAL_CODES]) assert.ok(errorsSection.includes(`\`${code}\``), code)
})
