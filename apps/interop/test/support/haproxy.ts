// The interop tests' HAProxy configuration (round-robin, no stickiness, one frontend per replica group); the process
// itself is started by startHaproxy from @tollgate/test-support.
import { spawnSync } from 'node:child_process'
import { createServer } from 'node:net'

export const HAPROXY_INSTALL_HINT = 'install it with: sudo apt-get update && sudo apt-get install -y haproxy'

/** `haproxy -v`'s first line, or undefined when the binary is absent. */
export function haproxyVersion(): string | undefined {
  const r = spawnSync('haproxy', ['-v'], { encoding: 'utf8' })
  if (r.error !== undefined || r.status !== 0) return undefined
  return r.stdout.split('\n')[0]
}

export interface BackendGroup {
  name: string
  /** The replicas' `host:port`s. */
  servers: string[]
}

/**
 * The configuration the README shows: HTTP mode, round-robin per request, no cookie or stick table (no stickiness),
 * health checks of `GET /readyz` every 300 ms, each allowed 1 s (a replica that is not ready — its store gone, or
 * draining for a shutdown — is out after two failed checks and back after two good ones: one slow probe on a busy
 * machine does not take a healthy replica out), and a connection refused by a dead replica
 * retried on the other one (`retries` + `option redispatch`). Requests that reached a replica are never
 * retried by the balancer: the platform retries with the same idempotency key, which is what makes that safe.
 * Each answer names its replica in X-Tollgate-Replica, so tests can see the round-robin.
 */
export function haproxyConfig(groups: readonly (BackendGroup & { bind: string })[]): string {
  const lines = [
    'global',
    '  maxconn 1024',
    '',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout check 1s',
    '  retries 3',
    '  option redispatch 1',
  ]
  for (const g of groups) {
    lines.push(
      '',
      `frontend ${g.name}`,
      `  bind ${g.bind}`,
      `  default_backend ${g.name}_replicas`,
      '',
      `backend ${g.name}_replicas`,
      '  balance roundrobin',
      '  option httpchk GET /readyz',
      '  http-check expect status 200',
      '  http-response set-header X-Tollgate-Replica %[srv_name]',
      ...g.servers.map((s, i) => `  server ${g.name}${i + 1} ${s} check inter 300ms fall 2 rise 2`),
    )
  }
  return `${lines.join('\n')}\n`
}

/** A free loopback port (bound then released: a small race, acceptable in tests). */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((r) => server.close(() => r()))
  return port
}
