import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js'
import { createContractAjv, describeErrors } from './validator.js'

/** What the MCP SDK's validator returns (structurally its JsonSchemaValidatorResult). */
export type SdkValidationResult<T> =
  | { valid: true; data: T; errorMessage: undefined }
  | { valid: false; data: undefined; errorMessage: string }

/** Structurally the MCP SDK v2's `jsonSchemaValidator`: pass it as `jsonSchemaValidator` to a Client or McpServer. */
export interface ContractJsonSchemaValidator {
  getValidator<T>(schema: object): (input: unknown) => SdkValidationResult<T>
}

// Distinct schema texts kept compiled; beyond this, schemas are compiled, used and dropped (bounded memory).
const MAX_CACHED_SCHEMAS = 512

/**
 * A JSON Schema validator for the MCP SDK v2 with the whole contract loaded by $id, that compiles each distinct
 * schema once. Unlike `new AjvJsonSchemaValidator(createContractAjv())` (which is also correct), it does not
 * recompile, nor grow Ajv's cache, when every session hands it fresh copies of the same tool schemas.
 * Error messages name paths and keywords, never values.
 */
export function contractJsonSchemaValidator(): ContractJsonSchemaValidator {
  const ajv: Ajv2020 = createContractAjv()
  const compiled = new Map<string, (input: unknown) => SdkValidationResult<unknown>>()
  const wrap =
    (validate: ValidateFunction) =>
    (input: unknown): SdkValidationResult<unknown> =>
      validate(input)
        ? { valid: true, data: input, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: describeErrors(validate) }
  return {
    getValidator<T>(schema: object): (input: unknown) => SdkValidationResult<T> {
      const key = JSON.stringify(schema)
      let check = compiled.get(key)
      if (check === undefined) {
        // Compile a private copy: Ajv caches by object identity, and the caller's object may be mutated later.
        const copy = JSON.parse(key) as object
        const validate = ajv.compile(copy)
        check = wrap(validate)
        if (compiled.size < MAX_CACHED_SCHEMAS) compiled.set(key, check)
        else ajv.removeSchema(copy)
      }
      return check as (input: unknown) => SdkValidationResult<T>
    },
  }
}
