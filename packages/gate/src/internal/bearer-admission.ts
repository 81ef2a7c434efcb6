import type { IncomingMessage } from 'node:http'
import type { AuthInfo } from '@modelcontextprotocol/server'
import type { Admission } from '@tollgate/mcp-endpoint'
import type { Audience } from '../audience.js'
import { GateError, TokenRefused } from '../errors.js'
import { UNAUTHORIZED_BODY } from '../resource-metadata.js'

/** What admission reports: a refused token (its code) or a fault of the server's own. */
export type AdmissionEvent =
  | { kind: 'refused-token'; code: string; libraryError: string | undefined }
  | { kind: 'fault'; code: string; error: unknown }

/**
 * Bearer audience on the headers alone: a caller without a valid token never gets a body byte read. Every refusal
 * is the same 401 with the challenge; keys unavailable or anything unexpected is a 503, never dressed up as the
 * caller's bad token. Each admission makes a fresh AuthInfo (the SDK path finds its exchange by it).
 */
export function bearerAdmission(
  audience: Audience,
  challenge: string,
  emit: (event: AdmissionEvent) => void,
): (req: IncomingMessage) => Promise<Admission> {
  return async (req) => {
    try {
      const admission = await audience.admit(header(req, 'authorization'))
      const authInfo: AuthInfo = {
        token: admission.token,
        clientId: admission.subject,
        scopes: admission.scopes,
        expiresAt: admission.expiresAt,
        resource: new URL(admission.resource),
      }
      // Sessions are bound to the token's sub.
      return { ok: true, caller: admission.subject, authInfo }
    } catch (error) {
      if (error instanceof TokenRefused) {
        emit({ kind: 'refused-token', code: error.code, libraryError: error.libraryError })
        return {
          ok: false,
          status: 401,
          headers: { 'www-authenticate': challenge },
          body: UNAUTHORIZED_BODY,
          reason: error.code,
        }
      }
      emit({ kind: 'fault', code: error instanceof GateError ? error.code : 'audience', error })
      return {
        ok: false,
        status: 503,
        headers: { 'retry-after': '5' },
        body: '{"error":"temporarily_unavailable"}',
        reason: 'audience',
      }
    }
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}
