import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import { contractRef, schemaDocuments } from './schemas.js'

/**
 * A fresh Ajv (JSON Schema 2020-12) with every contract schema added under its $id. Strict mode; no type
 * coercion, no defaults, no removal of properties, no `loadSchema`: a ref outside the contract fails to
 * compile instead of being fetched. Union types (["string","null"]) are allowed: the contract's nullable fields.
 */
export function createContractAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    strict: true,
    allowUnionTypes: true,
    allErrors: false,
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
