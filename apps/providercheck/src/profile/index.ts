// The profile's rules the kit judges a provider's tool list by: the argument names the platform sends, the schema
// limits, and the judgement itself.
export { judgeProfile } from './judge-profile.js'
export { PLATFORM_ARGUMENTS } from './platform-arguments.js'
export { FORBIDDEN_KEYWORDS, limitProblems, measureSchema, SCHEMA_LIMITS } from './schema-limits.js'
