import { isIP } from 'node:net';

/** What an IP address is, as far as "may toolgate connect to it" goes. */
export type AddressCategory =
  | 'public' | 'private' | 'loopback' | 'link-local'
  | 'metadata' | 'unspecified' | 'multicast' | 'reserved';

/** Categories that `network.allow_private: true` lifts; the others are never reachable. */
const LIFTED_BY_ALLOW_PRIVATE: ReadonlySet<AddressCategory> = new Set(['private', 'loopback', 'link-local']);

export interface AddressVerdict {
  address: string;
  category: AddressCategory;
  allowed: boolean;
}

type V4 = [number, number, number, number];

function parseV4(s: string): V4 | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const parts = m.slice(1).map(Number) as V4;
  return parts.every((p) => p <= 255) ? parts : null;
}

function inV4(a: V4, net: V4, bits: number): boolean {
  const n = ((a[0] << 24) | (a[1] << 16) | (a[2] << 8) | a[3]) >>> 0;
  const b = ((net[0] << 24) | (net[1] << 16) | (net[2] << 8) | net[3]) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (n & mask) === (b & mask);
}

const V4_TABLE: Array<[V4, number, AddressCategory]> = [
  [[169, 254, 169, 254], 32, 'metadata'],
  [[0, 0, 0, 0], 8, 'unspecified'],
  [[127, 0, 0, 0], 8, 'loopback'],
  [[10, 0, 0, 0], 8, 'private'],
  [[172, 16, 0, 0], 12, 'private'],
  [[192, 168, 0, 0], 16, 'private'],
  [[100, 64, 0, 0], 10, 'private'],
  [[169, 254, 0, 0], 16, 'link-local'],
  [[192, 0, 0, 0], 24, 'reserved'],
  [[192, 0, 2, 0], 24, 'reserved'],
  [[198, 18, 0, 0], 15, 'reserved'],
  [[198, 51, 100, 0], 24, 'reserved'],
  [[203, 0, 113, 0], 24, 'reserved'],
  [[224, 0, 0, 0], 4, 'multicast'],
  [[240, 0, 0, 0], 4, 'reserved'],
];

function classifyV4(a: V4): AddressCategory {
  for (const [net, bits, cat] of V4_TABLE) if (inV4(a, net, bits)) return cat;
  return 'public';
}

/** Eight 16-bit groups of an IPv6 address (handles `::` and an embedded dotted IPv4 tail). */
export function parseV6(input: string): number[] | null {
  let s = input.toLowerCase();
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    const v4 = parseV4(s.slice(lastColon + 1));
    if (!v4) return null;
    s = `${s.slice(0, lastColon + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const group = (h: string) => (h === '' ? [] : h.split(':').map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)));
  const head = group(halves[0]!);
  const rest = halves.length === 2 ? group(halves[1]!) : [];
  const want = 8;
  let groups: number[];
  if (halves.length === 2) {
    const fill = want - head.length - rest.length;
    if (fill < 1) return null;
    groups = [...head, ...new Array<number>(fill).fill(0), ...rest];
  } else {
    groups = head;
    if (groups.length !== want) return null;
  }
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

function v4From(g: number[], i: number): V4 {
  return [g[i]! >> 8, g[i]! & 0xff, g[i + 1]! >> 8, g[i + 1]! & 0xff];
}

function classifyV6(g: number[]): AddressCategory {
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (g.every((x) => x === 0)) return 'unspecified';
  if (zeroUpTo(7) && g[7] === 1) return 'loopback';
  // IPv4 inside IPv6: mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16.
  if (zeroUpTo(5) && g[5] === 0xffff) return classifyV4(v4From(g, 6));
  // SIIT ::ffff:0:a.b.c.d (RFC 6052/7915): a translator would map it to the IPv4 address.
  if (zeroUpTo(4) && g[4] === 0xffff && g[5] === 0) return classifyV4(v4From(g, 6));
  if (zeroUpTo(6)) return classifyV4(v4From(g, 6));
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return classifyV4(v4From(g, 6));
  if (g[0] === 0x2002) return classifyV4(v4From(g, 1));
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && g.slice(2, 7).every((x) => x === 0) && g[7] === 0x254) return 'metadata';
  if ((g[0]! & 0xfe00) === 0xfc00) return 'private';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'private';
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast';
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'reserved';
  if (g[0] === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return 'reserved';
  return 'public';
}

/** Classifies a literal IP address (v4 dotted quad or v6, brackets allowed). Null when it is not an IP. */
export function classifyAddress(address: string): AddressCategory | null {
  const a = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const kind = isIP(a.split('%')[0]!);
  if (kind === 4) {
    const v4 = parseV4(a);
    return v4 ? classifyV4(v4) : null;
  }
  if (kind === 6) {
    const g = parseV6(a);
    return g ? classifyV6(g) : null;
  }
  return null;
}

/**
 * May a connection go to this address? Public: yes. Private, loopback, link-local: only with
 * `allow_private`. Metadata, unspecified, multicast, reserved: never. Anything unparsable: no.
 */
export function judgeAddress(address: string, allowPrivate: boolean): AddressVerdict {
  const category = classifyAddress(address) ?? 'reserved';
  const allowed = category === 'public' || (allowPrivate && LIFTED_BY_ALLOW_PRIVATE.has(category));
  return { address, category, allowed };
}

/**
 * The host of a URL as the WHATWG parser normalised it: decimal (2130706433), octal (0177.0.0.1),
 * hex (0x7f.1) and short (127.1) IPv4 forms all come out as a dotted quad; IPv6 loses its brackets.
 */
export function urlHost(url: URL): { host: string; ip: 4 | 6 | 0 } {
  let host = url.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  host = host.replace(/\.$/, '');
  const ip = isIP(host) as 4 | 6 | 0;
  return { host, ip };
}
