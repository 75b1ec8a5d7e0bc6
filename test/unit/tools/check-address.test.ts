/**
 * Which addresses the web tools may connect to: public unicast only, unless the project opens a
 * private range; an IPv6 address that carries an IPv4 address is judged by the address it carries.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/errors/index.js';
import { checkAddress } from '../../../src/tools/check-address.js';
import { parseNetworkPolicy } from '../../../src/tools/network-policy.js';
import { thrown } from '../../support/thrown.js';

const CLOSED = parseNetworkPolicy('hosts: ["*"]\n', 'network.yaml');
const refusal = (address: string, policy = CLOSED) =>
  thrown(() => checkAddress(address, address, policy));

describe('checkAddress', () => {
  it('lets public unicast addresses through', () => {
    for (const address of ['8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])
      expect(() => checkAddress(address, address, CLOSED), address).not.toThrow();
  });

  it('judges IPv4-compatible, mapped, SIIT and NAT64 forms by the IPv4 address they carry', () => {
    for (const [address, range, carries] of [
      ['::7f00:1', 'loopback', '127.0.0.1'], // http://[::127.0.0.1]/ as URLs write it
      ['::a9fe:a9fe', 'linkLocal', '169.254.169.254'],
      ['::a00:1', 'private', '10.0.0.1'],
      ['::ffff:0:7f00:1', 'loopback', '127.0.0.1'],
      ['64:ff9b::a9fe:a9fe', 'linkLocal', '169.254.169.254'],
      ['64:ff9b:1::7f00:1', 'loopback', '127.0.0.1'],
      ['2002:7f00:1::1', 'loopback', '127.0.0.1'],
      ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback', '127.0.0.1'],
    ] as const) {
      const err = refusal(address);
      expect(err.code, address).toBe(ErrorCode.PRIVATE_ADDRESS);
      expect(err.details, address).toMatchObject({ range, carries });
      expect(err.message, address).toContain(`carries the IPv4 address ${carries}`);
    }
    expect(refusal('::ffff:127.0.0.1').details).toMatchObject({ range: 'loopback' });
  });

  it('keeps IPv6 loopback, unspecified and link-local private, and tunnels to public IPv4 too', () => {
    for (const address of ['::1', '::', 'fe80::1', 'fd00::1', '2002:808:808::1'])
      expect(refusal(address).code, address).toBe(ErrorCode.PRIVATE_ADDRESS);
  });

  it('opens a private IPv4 range for the IPv6 forms that carry it as well', () => {
    const open = parseNetworkPolicy('hosts: ["*"]\nprivate: [127.0.0.1]\n', 'network.yaml');
    for (const address of ['127.0.0.1', '::ffff:127.0.0.1', '::7f00:1', '64:ff9b::7f00:1'])
      expect(() => checkAddress(address, address, open), address).not.toThrow();
    expect(refusal('::a9fe:a9fe', open).code).toBe(ErrorCode.PRIVATE_ADDRESS);
  });
});
