/** Keeping the web tools away from private addresses the project has not opened. */
import type * as IpaddrPackage from 'ipaddr.js';
import { lazyPackage } from '../lazy-package.js';
import { DirigentError, ErrorCode } from '../errors/index.js';
import { NETWORK_POLICY_FILE, type NetworkPolicy } from './network-policy.js';

const ipaddr = lazyPackage<typeof IpaddrPackage>('ipaddr.js');

type Address = IpaddrPackage.IPv4 | IpaddrPackage.IPv6;

/**
 * Refuses, with a fatal `PRIVATE_ADDRESS`, a connection to `address` (an IP address a host name
 * resolved to, or an IP written in a URL) unless it is a public unicast address or lies in one of
 * the policy's `private` ranges. Everything else is refused: loopback, RFC 1918 and carrier-grade
 * NAT ranges, link-local (cloud metadata services answer at 169.254.169.254), unique-local,
 * unspecified (`0.0.0.0` reaches this machine), multicast, broadcast and reserved ranges.
 *
 * An IPv6 address that carries an IPv4 address is judged by that IPv4 address (see
 * {@link carriedIPv4}): `::ffff:127.0.0.1`, `::127.0.0.1` (which URLs write `::7f00:1`) and
 * `64:ff9b::a9fe:a9fe` are loopback and link-local, not public. `host` names the URL's host in
 * the message.
 */
export function checkAddress(address: string, host: string, policy: NetworkPolicy): void {
  let parsed: Address;
  try {
    parsed = ipaddr().process(address.replace(/%.*$/, ''));
  } catch {
    throw refused(address, host, 'not an IP address');
  }
  const carried = parsed.kind() === 'ipv6' ? carriedIPv4(parsed as IpaddrPackage.IPv6) : undefined;
  if (carried !== undefined) {
    const range = carried.address.range();
    if (range !== 'unicast') {
      if (opened(carried.address, policy) || opened(parsed, policy)) return;
      throw refused(parsed.toString(), host, range, carried.address.toString());
    }
    // A public IPv4 address behind a translator (NAT64) is how IPv6-only networks reach it.
    if (carried.translated) return;
  }
  const range = parsed.range();
  if (range === 'unicast' || opened(parsed, policy)) return;
  throw refused(parsed.toString(), host, range);
}

/**
 * The IPv4 address an IPv6 address carries, and whether the IPv6 form is only a way of writing
 * it (`translated`: traffic to it reaches that IPv4 address, so the IPv4 address alone decides).
 * Mapped `::ffff:a.b.c.d` addresses are IPv4 already (`ipaddr.process` turns them into IPv4).
 *
 * - IPv4-compatible `::a.b.c.d` (deprecated, still routed by some stacks), SIIT `::ffff:0:a.b.c.d`
 *   and NAT64 `64:ff9b::a.b.c.d`, `64:ff9b:1::/48`: translated;
 * - 6to4 `2002:aabb:ccdd::/48` and Teredo `2001:0::/32` (the client address, inverted): tunnels
 *   whose IPv4 end is refused when private; such addresses are otherwise not public unicast.
 */
export function carriedIPv4(
  v6: IpaddrPackage.IPv6,
): { address: IpaddrPackage.IPv4; translated: boolean } | undefined {
  const p = v6.parts;
  const v4 = (high: number, low: number) =>
    new (ipaddr().IPv4)([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  // `::` and `::1` are IPv6's own unspecified and loopback addresses.
  if (zeros(0, 6) && !(p[6] === 0 && p[7]! <= 1))
    return { address: v4(p[6]!, p[7]!), translated: true };
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0)
    return { address: v4(p[6]!, p[7]!), translated: true };
  if (p[0] === 0x64 && p[1] === 0xff9b && (p[2] === 1 || zeros(2, 6)))
    return { address: v4(p[6]!, p[7]!), translated: true };
  if (p[0] === 0x2002) return { address: v4(p[1]!, p[2]!), translated: false };
  if (p[0] === 0x2001 && p[1] === 0)
    return { address: v4(p[6]! ^ 0xffff, p[7]! ^ 0xffff), translated: false };
  return undefined;
}

function opened(address: Address, policy: NetworkPolicy): boolean {
  return policy.privateRanges.some(
    ([net, bits]) => net.kind() === address.kind() && address.match(net, bits),
  );
}

function refused(address: string, host: string, range: string, carries?: string): DirigentError {
  const via = host === address ? '' : ` (${host} resolves to it)`;
  const what = carries === undefined ? range : `${range}: it carries the IPv4 address ${carries}`;
  return DirigentError.fatal(
    ErrorCode.PRIVATE_ADDRESS,
    `${address}${via} is a private address (${what}); the project does not open it to its web tools`,
    {
      hint: `Set url to a public host; if the project means to reach ${carries ?? address}, list it under private in ${NETWORK_POLICY_FILE}.`,
      details: { address, host, range, ...(carries !== undefined && { carries }) },
    },
  );
}
