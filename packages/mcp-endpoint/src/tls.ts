// TLS served by the process itself: the certificate (a chain allowed) and key in PEM, checked before use and
// replaceable while serving. Node's https.Server.setSecureContext swaps the context for new handshakes only:
// connections already open keep theirs, so nothing in flight is cut.
import { readFile } from 'node:fs/promises'
import type { Server } from 'node:http'
import type { Server as HttpsServer } from 'node:https'
import { createSecureContext } from 'node:tls'
import { TlsCredentialsError } from './errors.js'

/** A certificate (PEM; the leaf first, then any intermediates) and its private key (PEM). */
export interface TlsCredentials {
  cert: string | Buffer
  key: string | Buffer
}

/**
 * Throws {@link TlsCredentialsError} unless `credentials` can serve TLS (both PEM, the key the certificate's own).
 * OpenSSL does the checking: the same code that will serve the handshakes.
 */
export function checkTlsCredentials(credentials: TlsCredentials): void {
  if (!looksPem(credentials.cert, 'CERTIFICATE'))
    throw new TlsCredentialsError('cert', 'the TLS certificate is not a PEM certificate')
  if (!looksPem(credentials.key, 'PRIVATE KEY'))
    throw new TlsCredentialsError('key', 'the TLS key is not a PEM private key')
  try {
    createSecureContext({ cert: credentials.cert, key: credentials.key })
  } catch (error) {
    // OpenSSL's reason (e.g. "key values mismatch") names no byte of the files; its message is not passed on anyway.
    const reason = (error as { reason?: unknown }).reason
    throw new TlsCredentialsError(
      'pair',
      typeof reason === 'string' && /mismatch/i.test(reason)
        ? 'the TLS key does not match the certificate'
        : 'the TLS certificate and key cannot be used',
      { cause: error },
    )
  }
}

/** Reads a PEM certificate file and key file; throws TlsCredentialsError naming which could not be read or used. */
export async function readTlsFiles(files: { certFile: string; keyFile: string }): Promise<TlsCredentials> {
  const read = async (which: 'cert' | 'key', path: string) => {
    try {
      return await readFile(path)
    } catch (error) {
      const code = (error as { code?: unknown }).code
      throw new TlsCredentialsError(
        which,
        `the TLS ${which === 'cert' ? 'certificate' : 'key'} file cannot be read${typeof code === 'string' ? ` (${code})` : ''}`,
        { cause: error },
      )
    }
  }
  const credentials = { cert: await read('cert', files.certFile), key: await read('key', files.keyFile) }
  checkTlsCredentials(credentials)
  return credentials
}

/**
 * Replaces the certificate and key of a server made by createLimitedServer with `tls`: new handshakes get the new
 * pair, open connections keep theirs. A pair that cannot serve is refused (TlsCredentialsError) and the old one kept.
 */
export function replaceTlsCredentials(server: Server, credentials: TlsCredentials): void {
  const https = server as unknown as Partial<HttpsServer>
  if (typeof https.setSecureContext !== 'function')
    throw new TlsCredentialsError('pair', 'this server does not serve TLS (it was started without a certificate)')
  checkTlsCredentials(credentials)
  https.setSecureContext({ cert: credentials.cert, key: credentials.key })
}

function looksPem(value: string | Buffer, label: string): boolean {
  const text = typeof value === 'string' ? value : value.toString('latin1')
  return new RegExp(`-----BEGIN [A-Z ]*${label}-----`).test(text)
}
