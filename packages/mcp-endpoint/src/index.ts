// @tollgate/mcp-endpoint — everything exported here is public API. Helpers live in src/internal/.
// The receiving half of an MCP server, shared by the provider and quenchz: one door, both eras, any replica.

export { BODY_REFUSAL_MESSAGES, type BodyLimits, type BodyRead, BodyReader, type BodyRefusal } from './body.js'
export {
  type Admission,
  type AdmissionRequest,
  type AdmittedMessage,
  createMcpEndpoint,
  type EndpointEvent,
  type EndpointOptions,
  type McpEndpoint,
  MODERN_META_VERDICTS,
  type OtherRoute,
} from './endpoint.js'
export {
  EndpointConfigError,
  EndpointError,
  type EndpointErrorCode,
  SessionStoreError,
  TlsCredentialsError,
} from './errors.js'
export {
  allowListFor,
  defaultAllowList,
  type HostAllowList,
  type HostVerdict,
  hostGuard,
  loopbackAllowList,
} from './host-allow-list.js'
export { jsonRpcError } from './internal/answers.js'
export { type Caller, idOf, LegacySessions, type LegacySessionsOptions } from './legacy-sessions.js'
export {
  type ConnectionLimits,
  createLimitedServer,
  type ResolvedConnectionLimits,
  resolveConnectionLimits,
} from './server-limits.js'
export { ownerHash, SessionIds } from './session-id.js'
export { MemorySessionStore, type SessionCaps, type SessionStore } from './session-store.js'
export { checkTlsCredentials, readTlsFiles, replaceTlsCredentials, type TlsCredentials } from './tls.js'
export {
  legacyToolCall,
  MODERN_PROTOCOL_VERSION,
  modernResultTail,
  modernToolCall,
  openResultJson,
  type PlainToolCall,
  writeToolResult,
} from './tool-call.js'
export type { AnswerHead, AroundToolCall, ToolCallExchange } from './tool-call-hook.js'
