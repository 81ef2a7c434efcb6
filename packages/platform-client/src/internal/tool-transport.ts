// The one thing the client asks of a binding: make one attempt of a profile tool call. Retries, waits and the
// verification after them belong to the client, the same for every binding.
import type { AttemptOptions, CallContext, ToolOutcome, Transport } from '../types.js'

/** One attempt of a profile tool call, its tool already known to be in the profile. */
export interface ToolCall {
  name: string
  /** The contract's $id of the tool's result. */
  outputRef: string
  args: Record<string, unknown>
  context: CallContext
  options: AttemptOptions
}

export interface ToolTransport {
  readonly kind: Transport
  /** One attempt: the validated answer, or a PlatformClientError (TypeError for caller misuse). */
  call(request: ToolCall): Promise<ToolOutcome>
}
