// Public API of @tollgate/strict-json: everything exported here is public and versioned; nothing else is.
export {
  STRICT_JSON_ERROR_CODES,
  STRICT_JSON_ERROR_MESSAGES,
  StrictJsonError,
  type StrictJsonErrorCode,
} from './errors.js'
export { JsonNumber } from './json-number.js'
export { type JsonObject, type JsonValue, type ParseOptions, parseStrict } from './parse-strict.js'
export { readFdBounded, readStreamBounded } from './read-bounded.js'
export { parsePlain, toPlain } from './to-plain.js'
