import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import { contractRef, schemaDocuments } from './schemas.js'

/**
 * A fresh Ajv (JSON Schema 2020-12) with every contract schema added under its $id. Strict mode; no type
 * coercion, no defaults, no removal of properties, no `loadSchema`: a ref outside the contract fails to
 * compile instead of being fetched. Union types (["string","null"]) are allowed: the contract's nullable fields.
 * `allErrors: true` collects every error instead of stopping at the first (for reporting, not untrusted input).
 */
export function createContractAjv(options: { allErrors?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({
    strict: true,
    allowUnionTypes: true,
    allErrors: options.allErrors ?? false,
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
  })
  for (const doc of schemaDocuments) ajv.addSchema(doc)
  return ajv
}

/** The outcome of a contract validator; `errors` names paths and keywords, never the values. */
export type ContractValidation = { valid: true } | { valid: false; errors: string }

// Paths and ajv's messages only: ajv messages name keywords and schema values, never the instance's values.
export function describeErrors(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .map(
      (e) =>
        `${e.instancePath === '' ? '(root)' : e.instancePath} ${e.keyword === 'false schema' ? 'must not be present' : (e.message ?? e.keyword)}`,
    )
    .join('; ')
}

let shared: Ajv2020 | undefined
const cache = new Map<string, (value: unknown) => ContractValidation>()

/**
 * A validator for one contract schema (relative or absolute ref), compiled once and cached for the process.
 * Throws UnknownSchemaError (ERR_CONTRACT_UNKNOWN_SCHEMA) for a ref that names no contract schema.
 */
export function contractValidator(ref: string): (value: unknown) => ContractValidation {
  const id = contractRef(ref)
  const hit = cache.get(id)
  if (hit !== undefined) return hit
  shared ??= createContractAjv()
  const ajv = shared
  const validate: ValidateFunction = ajv.getSchema(id) ?? ajv.compile({ $ref: id })
  const check = (value: unknown): ContractValidation =>
    validate(value) ? { valid: true } : { valid: false, errors: describeErrors(validate) }
  cache.set(id, check)
  return check
}

let allErrorsAjv: Ajv2020 | undefined
const faultCache = new Map<string, ValidateFunction>()

/** `/refunds/0/amount` → `.refunds[0].amount`. */
function dotted(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((token) => (/^\d+$/.test(token) ? `[${token}]` : `.${token}`))
    .join('')
}

/**
 * Why a value fails a contract schema, as at most `limit` lines `<schema>.<path>: <rule>` — e.g.
 * `transaction.settlement: required`, `transaction.created_at: must be string`,
 * `transaction.internal_note: not allowed`. `<schema>` is the schema file's name without `.json`. Paths, property
 * names and keywords only: never a value. Empty when the value is valid. Validates with every error collected
 * (a second, separately compiled validator): meant for the rare invalid value, after contractValidator said so.
 */
export function contractFaults(ref: string, value: unknown, limit = 3): string[] {
  const id = contractRef(ref)
  let validate = faultCache.get(id)
  if (validate === undefined) {
    allErrorsAjv ??= createContractAjv({ allErrors: true })
    validate = allErrorsAjv.getSchema(id) ?? allErrorsAjv.compile({ $ref: id })
    faultCache.set(id, validate)
  }
  if (validate(value)) return []
  const schema = id.slice(id.lastIndexOf('/') + 1).replace(/\.json(#.*)?$/, '')
  const lines: string[] = []
  for (const e of validate.errors ?? []) {
    // if/then and anyOf report their branches' own errors too; the branch errors are the informative ones.
    if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') continue
    let path = schema + dotted(e.instancePath)
    let rule: string
    if (e.keyword === 'required') {
      path += `.${(e.params as { missingProperty: string }).missingProperty}`
      rule = 'required'
    } else if (e.keyword === 'additionalProperties') {
      path += `.${(e.params as { additionalProperty: string }).additionalProperty}`
      rule = 'not allowed'
    } else if (e.keyword === 'false schema') rule = 'not allowed'
    else if (e.keyword === 'type') rule = `must be ${String((e.params as { type: unknown }).type)}`
    else if (e.keyword === 'enum' || e.keyword === 'const') rule = 'not an allowed value'
    else if (e.keyword === 'pattern') rule = 'does not match its pattern'
    else rule = e.message ?? e.keyword
    const line = `${path}: ${rule}`
    if (!lines.includes(line)) lines.push(line)
    if (lines.length === limit) break
  }
  return lines.length > 0 ? lines : [`${schema}: does not match its schema`]
}
