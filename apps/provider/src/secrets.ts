// Signing secrets as an operator hands them over: a list checked before use (one, or two while rotating; one
// environment), and a secrets file (one secret a line) re-read while serving. Errors name the line, never a value.
import { readFile } from 'node:fs/promises'
import { type SigningEnvironment, secretEnvironment } from '@tollgate/signing'
import { SecretsError } from './errors.js'

/** A secret is its prefix and printable ASCII without spaces or commas (a comma separates SIGNING_SECRET's two). */
const SECRET_SHAPE = /^srmps?_[\x21-\x2b\x2d-\x7e]+$/

/**
 * Checks a list of signing secrets: one or two, each srmps_… or srmp_… of printable characters, all of one
 * environment — `environment` when given (a running server's: a list that switches is refused). Returns that
 * environment; throws SecretsError (`line` = the 1-based position of a malformed one).
 */
export function checkSecretList(secrets: readonly string[], environment?: SigningEnvironment): SigningEnvironment {
  if (secrets.length === 0) throw new SecretsError('ERR_PROVIDER_SECRETS_EMPTY', 'no signing secret given')
  if (secrets.length > 2)
    throw new SecretsError(
      'ERR_PROVIDER_SECRETS_TOO_MANY',
      `${secrets.length} signing secrets given; at most two (the old and the new, while rotating)`,
    )
  let found: SigningEnvironment | undefined
  for (const [i, secret] of secrets.entries()) {
    const env = secretEnvironment(secret)
    if (env === undefined || !SECRET_SHAPE.test(secret))
      throw new SecretsError(
        'ERR_PROVIDER_SECRET_MALFORMED',
        `signing secret ${i + 1} is not srmps_… (sandbox) or srmp_… (production) followed by printable characters without spaces or commas`,
        { line: i + 1 },
      )
    if (found !== undefined && env !== found)
      throw new SecretsError('ERR_PROVIDER_SECRETS_ENVIRONMENT', 'the signing secrets mix sandbox and production')
    found = env
  }
  const env = found as SigningEnvironment
  if (environment !== undefined && env !== environment)
    throw new SecretsError(
      'ERR_PROVIDER_SECRETS_ENVIRONMENT',
      `the new signing secrets are ${env} secrets and this server runs in ${environment}: an environment does not change without a restart`,
    )
  return env
}

/**
 * Reads a secrets file: one or two secrets, one a line (the old one first while rotating); blank lines and the
 * whitespace around each secret are ignored. Throws SecretsError: ERR_PROVIDER_SECRETS_FILE_UNREADABLE,
 * ERR_PROVIDER_SECRETS_EMPTY, ERR_PROVIDER_SECRETS_TOO_MANY, ERR_PROVIDER_SECRET_MALFORMED (naming the line number),
 * ERR_PROVIDER_SECRETS_ENVIRONMENT (sandbox and production mixed). No message quotes the file's content.
 */
export async function readSecretsFile(path: string): Promise<string[]> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as { code?: unknown }).code
    throw new SecretsError(
      'ERR_PROVIDER_SECRETS_FILE_UNREADABLE',
      `the signing secrets file cannot be read${typeof code === 'string' ? ` (${code})` : ''}`,
      { cause: error },
    )
  }
  const lines = text
    .split(/\r?\n/)
    .map((line, i) => ({ secret: line.trim(), line: i + 1 }))
    .filter((l) => l.secret !== '')
  try {
    checkSecretList(lines.map((l) => l.secret))
  } catch (error) {
    // The position in the list is not the line in the file: say the file's line.
    if (error instanceof SecretsError && error.code === 'ERR_PROVIDER_SECRET_MALFORMED' && error.line !== undefined) {
      const line = lines[error.line - 1]?.line ?? error.line
      throw new SecretsError(
        'ERR_PROVIDER_SECRET_MALFORMED',
        `line ${line} of the signing secrets file is not a secret: srmps_… (sandbox) or srmp_… (production) followed by printable characters without spaces or commas`,
        { line },
      )
    }
    if (error instanceof SecretsError && error.code === 'ERR_PROVIDER_SECRETS_EMPTY')
      throw new SecretsError('ERR_PROVIDER_SECRETS_EMPTY', 'the signing secrets file holds no secret')
    throw error
  }
  return lines.map((l) => l.secret)
}
