/**
 * Where a project's web tools (`dirigent/http/fetch`, `dirigent/web/fetch`) may go: the hosts it
 * allows and the private addresses it opens, read from `.ai/config/network.yaml`. Without that
 * file, no host is allowed. The file sits in `.ai/`, which tools cannot write, so a value passed
 * to a tool cannot widen what the project allows.
 *
 * ```yaml
 * hosts:              # who may be asked, by the URL's host
 *   - example.com     # this host, any port
 *   - "*.example.org" # its subdomains (not example.org itself)
 *   - "api.example.net:8443" # this host on this port only
 *   - "*"             # any host (private addresses still need `private`)
 * private:            # private addresses (loopback, RFC 1918, link-local, …) that may be reached
 *   - 127.0.0.1
 *   - 10.0.0.0/8
 * ```
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type * as IpaddrPackage from 'ipaddr.js';
import type * as Yaml from 'yaml';
import { lazyPackage } from '../lazy-package.js';
import { DirigentError, ErrorCode } from '../errors/index.js';

const yaml = lazyPackage<typeof Yaml>('yaml');
const ipaddr = lazyPackage<typeof IpaddrPackage>('ipaddr.js');

/** The project's network settings file, relative to its root. */
export const NETWORK_POLICY_FILE = join('.ai', 'config', 'network.yaml');

/** One allowed host: a name (or `*.` suffix, or `*`), and a port or any. */
interface HostRule {
  host: string;
  port: number | undefined;
}

/** What a project allows its web tools. */
export interface NetworkPolicy {
  /** The file it was read from (for messages); undefined when the project has none. */
  file: string | undefined;
  hosts: readonly HostRule[];
  /** Private address ranges that may be reached, as ipaddr.js CIDRs. */
  privateRanges: readonly [IpaddrPackage.IPv4 | IpaddrPackage.IPv6, number][];
}

const cache = new Map<string, { mtimeMs: number; size: number; policy: NetworkPolicy }>();

/**
 * The network policy of the project at `projectDir`, read again only when its file changes.
 * A malformed file is a fatal `INVALID_CONFIG` naming the setting.
 */
export function loadNetworkPolicy(projectDir: string): NetworkPolicy {
  const file = join(projectDir, NETWORK_POLICY_FILE);
  const stats = statSync(file, { throwIfNoEntry: false });
  if (stats === undefined) return { file: undefined, hosts: [], privateRanges: [] };
  const cached = cache.get(file);
  if (cached && cached.mtimeMs === stats.mtimeMs && cached.size === stats.size)
    return cached.policy;
  const policy = parseNetworkPolicy(readFileSync(file, 'utf8'), file);
  cache.set(file, { mtimeMs: stats.mtimeMs, size: stats.size, policy });
  return policy;
}

/** Reads the text of a network settings file (see the module comment). */
export function parseNetworkPolicy(text: string, file: string): NetworkPolicy {
  const bad = (what: string): never => {
    throw DirigentError.fatal(ErrorCode.INVALID_CONFIG, `${file}: ${what}`, {
      hint: 'Write hosts: [example.com, "*.example.org"] and private: [127.0.0.1, 10.0.0.0/8].',
    });
  };
  let data: unknown;
  try {
    data = yaml().parse(text) ?? {};
  } catch (err) {
    return bad(`is not YAML: ${(err as Error).message}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    return bad('must be a mapping of settings.');
  const settings = data as Record<string, unknown>;
  for (const key of Object.keys(settings))
    if (key !== 'hosts' && key !== 'private')
      bad(`has no setting "${key}" (known: hosts, private).`);
  const list = (key: string): string[] => {
    const v = settings[key] ?? [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x.trim() === ''))
      return bad(`"${key}" must be a list of strings.`);
    return (v as string[]).map((x) => x.trim().toLowerCase());
  };
  const hosts = list('hosts').map(
    (rule) => hostRule(rule) ?? bad(`"${rule}" in hosts is not a host, *.suffix or host:port.`),
  );
  const privateRanges = list('private').map((range) => {
    try {
      return range.includes('/')
        ? ipaddr().parseCIDR(range)
        : ([ipaddr().parse(range), ipaddr().parse(range).kind() === 'ipv4' ? 32 : 128] as [
            IpaddrPackage.IPv4 | IpaddrPackage.IPv6,
            number,
          ]);
    } catch {
      return bad(`"${range}" in private is not an address or a CIDR range (10.0.0.0/8).`);
    }
  });
  return { file, hosts, privateRanges };
}

function hostRule(rule: string): HostRule | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9*][a-z0-9.*-]*|[0-9a-f:]+)(?::(\d{1,5}))?$/.exec(rule);
  if (m === null) return undefined;
  const host = m[1]!.replace(/^\[|\]$/g, '');
  if (host.includes('*') && host !== '*' && !/^\*\.[a-z0-9.-]+$/.test(host)) return undefined;
  return { host, port: m[2] === undefined ? undefined : Number(m[2]) };
}

/** Whether `policy` allows a request to `url`'s host (and port). */
export function allowsHost(policy: NetworkPolicy, url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return policy.hosts.some(
    (r) =>
      (r.port === undefined || r.port === port) &&
      (r.host === '*' ||
        r.host === host ||
        (r.host.startsWith('*.') && host.endsWith(r.host.slice(1)))),
  );
}
