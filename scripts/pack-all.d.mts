// Types of scripts/pack-all.mjs for the TypeScript tests that use it.
export interface Workspace {
  dir: string
  name: string
  private: boolean | undefined
  bin: unknown
}
export interface PackedTarball {
  name: string
  dir: string | undefined
  /** Absolute path of the .tgz. */
  file: string
  /** Bytes, as npm reports them. */
  size: number
  unpackedSize: number
}
export function publishableWorkspaces(): Workspace[]
export function cliOnlyApps(): Workspace[]
export function packAll(outDir: string, options?: { clis?: boolean }): PackedTarball[]
