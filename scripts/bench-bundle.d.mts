/** Compiles a TypeScript bench script to plain JavaScript (see bench-bundle.mjs); returns the .mjs path. */
export function benchBundle(script: string, options?: { workspaceSources?: boolean }): string
