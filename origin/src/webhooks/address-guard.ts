import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Resolves a host name to every address it has (A and AAAA); injectable so tests can change DNS. */
export type Resolver = (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => ({ address: entry.address, family: entry.family as 4 | 6 }));

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** Addresses a webhook must never reach: the service's own network, cloud metadata, and the non-routable. */
const forbidden = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // unspecified, "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, incl. 169.254.169.254 metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv6');
}

/** `::ffff:10.0.0.1` is 10.0.0.1 to the kernel, so it is judged as that. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

function isLoopbackAddress(address: string): boolean {
  const ip = unmapped(address);
  return loopback.check(ip.address, ip.family);
}

function isForbiddenAddress(address: string, allowLoopback: boolean): boolean {
  if (allowLoopback && isLoopbackAddress(address)) return false;
  const ip = unmapped(address);
  return forbidden.check(ip.address, ip.family);
}

export type UrlVerdict = { ok: true; url: URL; address: string; family: 4 | 6 } | { ok: false; reason: string };

/**
 * Checks a webhook URL and resolves its host: http(s) only, no credentials, and every address the
 * name resolves to must be public (one private address is enough to refuse: DNS could pick it).
 * The caller connects to the returned address, so a later DNS answer cannot redirect the request.
 */
export async function checkWebhookUrl(raw: string, resolve: Resolver, allowLoopback: boolean): Promise<UrlVerdict> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not a valid URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'only http and https URLs are allowed' };
  if (url.username || url.password) return { ok: false, reason: 'credentials in the URL are not allowed' };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: { address: string; family: 4 | 6 }[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) as 4 | 6 }];
  } else {
    try {
      addresses = await resolve(host);
    } catch {
      return { ok: false, reason: 'the host name does not resolve' };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: 'the host name does not resolve' };
  const refused = addresses.filter((entry) => isForbiddenAddress(entry.address, allowLoopback));
  if (refused.length > 0 && refused.every((entry) => isLoopbackAddress(entry.address))) {
    // The one refusal a developer with a local receiver meets: name the setting that lifts it.
    return {
      ok: false,
      reason:
        'the host resolves to a loopback address; for a local receiver, start the origin with WEBHOOK_ALLOW_LOOPBACK=true (never in production)',
    };
  }
  if (refused.length > 0) {
    return { ok: false, reason: 'the host resolves to a private, loopback, link-local or otherwise non-public address' };
  }
  return { ok: true, url, address: addresses[0]!.address, family: addresses[0]!.family };
}
