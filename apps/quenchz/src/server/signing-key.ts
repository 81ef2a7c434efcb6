// The in-process issuer's key, kept beside the tokens file so `quenchz tokens` can mint fresh tokens for a running
// server without a restart. Owner-only (0600), never inside a checkout (the tokens-path guard covers its folder),
// and removed when the server stops: it is worth exactly as much as the tokens it can mint.
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createInProcessIssuer, type InProcessIssuer } from '@tollgate/gate'
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose'
import type { ClockName } from './cli-options.js'
import { ISSUER } from './constants.js'

/** What `quenchz tokens` needs to mint for a running server. */
export interface KeyFile {
  issuer: string
  resource: string
  /** The endpoint URL written into the manifest. */
  url: string
  clock: ClockName
  tokenLifetimeSeconds: number
  keyId: string
  privateJwk: JWK
}

/** The key file of a tokens file: `<tokens>.key.json`, in the same folder. */
export function keyPathFor(tokensPath: string): string {
  return `${tokensPath}.key.json`
}

/** A fresh RS256 issuer whose private key can be written to the key file. */
export async function createKeptIssuer(resource: string): Promise<{ issuer: InProcessIssuer; privateJwk: JWK }> {
  const pair = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true })
  const privateJwk = await exportJWK(pair.privateKey)
  const issuer = await createInProcessIssuer({ issuer: ISSUER, resource, keyPair: pair })
  return { issuer, privateJwk }
}

/** Writes the key file, readable by the owner only. */
export function writeKeyFile(path: string, content: KeyFile): void {
  writeFileSync(path, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 })
  chmodSync(path, 0o600)
}

/** Removes the key file; a file already gone is fine. */
export function removeKeyFile(path: string): void {
  rmSync(path, { force: true })
}

/** Reads a key file and rebuilds the issuer from it. Throws with a one-line message (never the key) on failure. */
export async function issuerFromKeyFile(path: string): Promise<{ issuer: InProcessIssuer; kept: KeyFile }> {
  let kept: KeyFile
  try {
    kept = JSON.parse(readFileSync(path, 'utf8')) as KeyFile
  } catch (error) {
    const code = (error as { code?: string }).code
    throw new Error(
      code === 'ENOENT'
        ? `no signing key at ${path}: is quenchz serving with this --tokens-file?`
        : `the signing key at ${path} cannot be read`,
    )
  }
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = kept.privateJwk ?? {}
  try {
    const privateKey = await importJWK(kept.privateJwk, 'RS256')
    const publicKey = await importJWK(publicJwk, 'RS256')
    if (privateKey instanceof Uint8Array || publicKey instanceof Uint8Array) throw new Error('not an RSA key')
    const issuer = await createInProcessIssuer({
      issuer: kept.issuer,
      resource: kept.resource,
      keyPair: { publicKey, privateKey },
      keyId: kept.keyId,
    })
    return { issuer, kept }
  } catch {
    throw new Error(`the signing key at ${path} is not a usable RS256 key`)
  }
}
