import { BlockList, isIP } from 'node:net'

// Everything that is not a public unicast address: loopback, private, CGNAT, link-local, documentation,
// benchmarking, multicast, reserved and the IPv6 equivalents (IPv4-mapped addresses are checked as IPv4).
const nonPublic = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic.addSubnet(net, prefix, 'ipv4')
}
for (const [net, prefix] of [
  // ::/96 holds ::, ::1 and the deprecated IPv4-compatible addresses (::7f00:1); none is public.
  ['::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  nonPublic.addSubnet(net, prefix, 'ipv6')
}

/** true for a public unicast address; false for loopback, private, link-local and reserved ones. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return !nonPublic.check(address, 'ipv4')
  if (family !== 6) return false
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped?.[1]) return !nonPublic.check(mapped[1], 'ipv4')
  return !nonPublic.check(address, 'ipv6')
}

/** true for 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export function isLoopbackAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return address.startsWith('127.')
  if (family !== 6) return false
  if (address === '::1') return true
  const mapped = /^::ffff:(127\.\d+\.\d+\.\d+)$/i.exec(address)
  return mapped !== null
}
