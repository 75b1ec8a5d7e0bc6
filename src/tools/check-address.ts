/** Keeping the web tools away from private addresses the project has not opened. */
import type * as IpaddrPackage from 'ipaddr.js';
import { lazyPackage } from '../directive/lazy-package.js';
import { DirigentError, ErrorCode } from '../errors/index.js';
import { NETWORK_POLICY_FILE, type NetworkPolicy } from './network-policy.js';

const ipaddr = lazyPackage<typeof IpaddrPackage>('ipaddr.js');

/**
 * Refuses, with a fatal `PRIVATE_ADDRESS`, a connection to `address` (an IP address a host name
 * resolved to, or an IP written in a URL) unless it is a public unicast address or lies in one of
 * the policy's `private` ranges. Everything else is refused: loopback, RFC 1918 and carrier-grade
 * NAT ranges, link-local (cloud metadata services answer at 169.254.169.254), unique-local,
 * unspecified (`0.0.0.0` reaches this machine), multicast, broadcast, reserved ranges, and IPv6
 * forms that carry an IPv4 address (mapped ones are judged by that address). `host` names the
 * URL's host in the message.
 */
export function checkAddress(address: string, host: string, policy: NetworkPolicy): void {
  let parsed: IpaddrPackage.IPv4 | IpaddrPackage.IPv6;
  try {
    parsed = ipaddr().process(address.replace(/%.*$/, ''));
  } catch {
    throw refused(address, host, 'not an IP address');
  }
  const range = parsed.range();
  if (range === 'unicast') return;
  if (
    policy.privateRanges.some(
      ([net, bits]) => net.kind() === parsed.kind() && parsed.match(net, bits),
    )
  )
    return;
  throw refused(parsed.toString(), host, range);
}

function refused(address: string, host: string, range: string): DirigentError {
  const via = host === address ? '' : ` (${host} resolves to it)`;
  return DirigentError.fatal(
    ErrorCode.PRIVATE_ADDRESS,
    `${address}${via} is a private address (${range}); the project does not open it to its web tools`,
    {
      hint: `Set url to a public host; if the project means to reach ${address}, list it under private in ${NETWORK_POLICY_FILE}.`,
      details: { address, host, range },
    },
  );
}
