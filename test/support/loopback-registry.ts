// A registry on 127.0.0.1 that serves, for every package in the repository's package-lock.json, the package document
// npm resolves version ranges with, and the tarball bytes from the local npm cache (read only, by integrity).
// Why: `npm ci` fills the cache with tarballs only (it reads the lockfile), so `npm install -g ./x.tgz --offline`
// cannot resolve `^2.4.0` from the cache alone; this serves exactly the locked versions, with no network at all.
// It also serves the repository's own packed tarballs (`published`), as the npm registry would once they were
// published: an installed CLI's @tollgate/* dependencies resolve to exactly the tarballs under test.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

interface LockEntry {
  version?: string
  integrity?: string
  link?: boolean
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  peerDependenciesMeta?: Record<string, unknown>
  bin?: Record<string, string> | string
  engines?: Record<string, string>
  os?: string[]
  cpu?: string[]
  hasInstallScript?: boolean
  license?: string
}

export interface LoopbackRegistry {
  url: string
  /** Tarballs npm asked for that are not in the npm cache (name@version). */
  missing: string[]
  close(): Promise<void>
}

/** The file cacache keeps `integrity` (sha512-<base64>) in, under `<cache>/_cacache/content-v2`. */
export function cachedContentPath(npmCache: string, integrity: string): string | undefined {
  const sha512 = integrity.split(/\s+/).find((i) => i.startsWith('sha512-'))
  if (sha512 === undefined) return undefined
  const hex = Buffer.from(sha512.slice('sha512-'.length), 'base64').toString('hex')
  return join(npmCache, '_cacache', 'content-v2', 'sha512', hex.slice(0, 2), hex.slice(2, 4), hex.slice(4))
}

/** A packed tarball's package.json and integrity, as a registry's package document carries them. */
function packedEntry(file: string): { name: string; entry: LockEntry } {
  const manifest = JSON.parse(execFileSync('tar', ['-xzOf', file, 'package/package.json'], { encoding: 'utf8' })) as {
    name: string
    version: string
  } & LockEntry
  const bytes = readFileSync(file)
  const integrity = `sha512-${createHash('sha512').update(bytes).digest('base64')}`
  const { name, version, dependencies, optionalDependencies, peerDependencies, bin, engines, license } = manifest
  return {
    name,
    entry: {
      version,
      integrity,
      ...(dependencies && { dependencies }),
      ...(optionalDependencies && { optionalDependencies }),
      ...(peerDependencies && { peerDependencies }),
      ...(bin && { bin }),
      ...(engines && { engines }),
      ...(license && { license }),
    },
  }
}

export async function startLoopbackRegistry(
  lockFile: string,
  npmCache: string,
  published: readonly string[] = [],
): Promise<LoopbackRegistry> {
  const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as { packages: Record<string, LockEntry> }
  const byName = new Map<string, Map<string, LockEntry>>()
  for (const [path, entry] of Object.entries(lock.packages)) {
    const cut = path.lastIndexOf('node_modules/')
    if (cut < 0 || entry.link === true || entry.version === undefined || entry.integrity === undefined) continue
    const name = path.slice(cut + 'node_modules/'.length)
    const versions = byName.get(name) ?? new Map<string, LockEntry>()
    versions.set(entry.version, entry)
    byName.set(name, versions)
  }
  const publishedFiles = new Map<string, string>()
  for (const file of published) {
    const { name, entry } = packedEntry(file)
    byName.set(name, new Map([[entry.version as string, entry]]))
    publishedFiles.set(entry.integrity as string, file)
  }
  const missing: string[] = []
  let base = ''
  const tarballs = new Map<string, { name: string; version: string; integrity: string }>()

  const packument = (name: string, versions: Map<string, LockEntry>) => {
    const docs: Record<string, unknown> = {}
    let latest = ''
    for (const [version, e] of versions) {
      const file = `${name.split('/').at(-1)}-${version}.tgz`
      const tarball = `${base}/${name}/-/${file}`
      tarballs.set(`/${name}/-/${file}`, { name, version, integrity: e.integrity as string })
      docs[version] = {
        name,
        version,
        ...(e.dependencies && { dependencies: e.dependencies }),
        ...(e.optionalDependencies && { optionalDependencies: e.optionalDependencies }),
        ...(e.peerDependencies && { peerDependencies: e.peerDependencies }),
        ...(e.peerDependenciesMeta && { peerDependenciesMeta: e.peerDependenciesMeta }),
        ...(e.bin && { bin: e.bin }),
        ...(e.engines && { engines: e.engines }),
        ...(e.os && { os: e.os }),
        ...(e.cpu && { cpu: e.cpu }),
        ...(e.hasInstallScript && { hasInstallScript: true }),
        ...(e.license && { license: e.license }),
        dist: { tarball, integrity: e.integrity },
      }
      latest = version
    }
    return { name, 'dist-tags': { latest }, versions: docs }
  }

  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0] as string)
    const tarball = tarballs.get(path)
    if (tarball !== undefined) {
      const file = publishedFiles.get(tarball.integrity) ?? cachedContentPath(npmCache, tarball.integrity)
      if (file === undefined || !existsSync(file)) {
        missing.push(`${tarball.name}@${tarball.version}`)
        res.writeHead(404).end()
        return
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(readFileSync(file))
      return
    }
    const versions = byName.get(path.slice(1))
    if (versions === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}')
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument(path.slice(1), versions)))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url: `${base}/`,
    missing,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
