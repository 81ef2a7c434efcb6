// A private certificate authority for tests that serve HTTPS: a CA and leaf certificates for the names a test asks
// for, made by the openssl command line (Debian's openssl, on every machine here) in a temporary folder.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface TestCertificate {
  /** The leaf certificate, PEM (with the chain when the CA is an intermediate's issuer: here the leaf alone). */
  cert: string
  /** Its private key, PEM. */
  key: string
  /** Files holding the same (inside the CA's folder). */
  certFile: string
  keyFile: string
  /** The certificate's SHA-256 fingerprint as openssl prints it (AA:BB:…), to tell two leaves apart on the wire. */
  fingerprint256: string
}

export interface TestCertificateAuthority {
  /** The CA certificate, PEM: what a client trusts (`ca` option, NODE_EXTRA_CA_CERTS, HAProxy `ca-file`). */
  caCert: string
  caFile: string
  /** The folder holding every file; `dispose()` removes it. */
  dir: string
  /** A new leaf for these DNS names and IP addresses (default localhost, 127.0.0.1, ::1), valid for `days` (default 2). */
  issue(options?: { dnsNames?: string[]; ips?: string[]; days?: number }): TestCertificate
  dispose(): void
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
}

/** Makes a fresh CA (EC P-256) in a temporary folder. */
export function makeTestCertificateAuthority(name = 'Tollgate Test CA'): TestCertificateAuthority {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-ca-'))
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'ca.key'], dir)
  openssl(
    ['req', '-x509', '-new', '-key', 'ca.key', '-sha256', '-days', '3', '-subj', `/CN=${name}`, '-out', 'ca.pem'],
    dir,
  )
  let serial = 0
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    caCert: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    issue({ dnsNames = ['localhost'], ips = ['127.0.0.1', '::1'], days = 2 } = {}) {
      serial += 1
      const base = `leaf-${serial}`
      const san = [...dnsNames.map((n) => `DNS:${n}`), ...ips.map((ip) => `IP:${ip}`)].join(',')
      writeFileSync(
        join(dir, `${base}.ext`),
        `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`,
      )
      openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${base}.key`], dir)
      openssl(
        ['req', '-new', '-key', `${base}.key`, '-subj', `/CN=${dnsNames[0] ?? ips[0]}`, '-out', `${base}.csr`],
        dir,
      )
      openssl(
        [
          'x509',
          '-req',
          '-in',
          `${base}.csr`,
          '-CA',
          'ca.pem',
          '-CAkey',
          'ca.key',
          '-set_serial',
          String(1000 + serial),
          '-days',
          String(days),
          '-sha256',
          '-extfile',
          `${base}.ext`,
          '-out',
          `${base}.pem`,
        ],
        dir,
      )
      const fp = execFileSync('openssl', ['x509', '-in', `${base}.pem`, '-noout', '-fingerprint', '-sha256'], {
        cwd: dir,
        encoding: 'utf8',
      })
      return {
        cert: readFileSync(join(dir, `${base}.pem`), 'utf8'),
        key: readFileSync(join(dir, `${base}.key`), 'utf8'),
        certFile: join(dir, `${base}.pem`),
        keyFile: join(dir, `${base}.key`),
        fingerprint256: fp.trim().replace(/^.*=/, ''),
      }
    },
    dispose() {
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
