// The Host/Origin allow-list lives in @tollgate/mcp-endpoint (one door for every server); re-exported here so the
// gate's public API is unchanged. hostGuard keeps the gate's own error class for an empty list.
import { hostGuard as endpointHostGuard, type HostAllowList, type HostVerdict } from '@tollgate/mcp-endpoint'
import { GateConfigError } from './errors.js'

export {
  allowListFor,
  defaultAllowList,
  type HostAllowList,
  type HostVerdict,
  loopbackAllowList,
} from '@tollgate/mcp-endpoint'

/** The DNS-rebinding guard (see @tollgate/mcp-endpoint); an empty host list throws GateConfigError. */
export function hostGuard(
  allow: HostAllowList,
): (headers: { host?: string | undefined; origin?: string | undefined }) => HostVerdict {
  if (allow.hosts.length === 0)
    throw new GateConfigError('the host allow-list is empty; name the hosts this server answers for')
  return endpointHostGuard(allow)
}
