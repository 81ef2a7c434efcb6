// --port and --host: values checked before anything starts, and the listen errors people meet, said plainly.

/** A port from `--port`: a whole number 0–65535 (0 asks the system for a free one); otherwise the problem. */
export function parsePort(value: string, flag = '--port'): number | { problem: string } {
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65_535) {
    return { problem: `${flag} must be a whole number from 0 to 65535 (0 picks a free port)` }
  }
  return Number(value)
}

/**
 * What went wrong when a server could not listen on `host`:`port`, naming the flag to change; undefined when the
 * error is not a listen error (the caller reports it its own way).
 */
export function listenProblem(
  error: unknown,
  at: { host: string; port: number },
  flags: { port: string; host: string } = { port: '--port', host: '--host' },
): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  switch (code) {
    case 'EADDRINUSE':
      return `port ${at.port} on ${at.host} is already in use; pass another with ${flags.port} N (${flags.port} 0 picks a free one)`
    case 'EACCES':
      return `port ${at.port} needs privileges this user lacks; pass a port above 1023 with ${flags.port} N`
    case 'EADDRNOTAVAIL':
      return `${at.host} is not an address of this machine; pass one with ${flags.host} (e.g. 127.0.0.1)`
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${flags.host} ${at.host} does not resolve to an address`
    default:
      return undefined
  }
}
