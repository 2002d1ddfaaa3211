import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyAddress, judgeAddress, parseV6, urlHost } from './address.js';

const CASES: Array<[string, string]> = [
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['172.32.0.1', 'public'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'private'],
  ['100.128.0.1', 'public'],
  ['169.254.1.1', 'link-local'],
  ['169.254.169.254', 'metadata'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['255.255.255.255', 'reserved'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['fc00::1', 'private'],
  ['fd12:3456::1', 'private'],
  ['fd00:ec2::254', 'metadata'],
  ['ff02::1', 'multicast'],
  ['2606:4700::1111', 'public'],
  // IPv4 inside IPv6: mapped, compatible, NAT64, 6to4
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:8.8.8.8', 'public'],
  ['::127.0.0.1', 'loopback'],
  ['64:ff9b::a9fe:a9fe', 'metadata'],
  ['64:ff9b::7f00:1', 'loopback'],
  ['::ffff:0:7f00:1', 'loopback'],
  ['::ffff:0:a00:1', 'private'],
  ['2002:7f00:1::', 'loopback'],
  ['2002:0808:0808::', 'public'],
];

for (const [addr, want] of CASES) {
  test(`classifies ${addr} as ${want}`, () => {
    assert.equal(classifyAddress(addr), want);
  });
}

test('not an IP: null; garbage is never allowed', () => {
  assert.equal(classifyAddress('example.com'), null);
  assert.equal(classifyAddress('1.2.3'), null);
  assert.equal(judgeAddress('not-an-ip', true).allowed, false);
});

test('allow_private lifts private, loopback, link-local — never metadata, unspecified, multicast', () => {
  assert.equal(judgeAddress('127.0.0.1', false).allowed, false);
  assert.equal(judgeAddress('127.0.0.1', true).allowed, true);
  assert.equal(judgeAddress('10.0.0.1', true).allowed, true);
  assert.equal(judgeAddress('fe80::1', true).allowed, true);
  assert.equal(judgeAddress('169.254.169.254', true).allowed, false);
  assert.equal(judgeAddress('fd00:ec2::254', true).allowed, false);
  assert.equal(judgeAddress('::ffff:169.254.169.254', true).allowed, false);
  assert.equal(judgeAddress('0.0.0.0', true).allowed, false);
  assert.equal(judgeAddress('::', true).allowed, false);
  assert.equal(judgeAddress('8.8.8.8', false).allowed, true);
});

test('parseV6 expands :: and dotted tails, rejects malformed input', () => {
  assert.deepEqual(parseV6('::1'), [0, 0, 0, 0, 0, 0, 0, 1]);
  assert.deepEqual(parseV6('::ffff:1.2.3.4'), [0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
  assert.deepEqual(parseV6('1:2:3:4:5:6:7:8'), [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.equal(parseV6('1::2::3'), null);
  assert.equal(parseV6('1:2:3'), null);
  assert.equal(parseV6('12345::'), null);
});

test('URL host forms that hide an IP are normalised to the dotted quad', () => {
  const forms = ['http://2130706433/', 'http://0177.0.0.1/', 'http://0x7f.0.0.1/', 'http://0x7f000001/', 'http://127.1/', 'http://017700000001/', 'http://127.0.0.1./'];
  for (const f of forms) {
    const h = urlHost(new URL(f));
    assert.deepEqual(h, { host: '127.0.0.1', ip: 4 }, f);
  }
  assert.deepEqual(urlHost(new URL('http://[::1]:8080/')), { host: '::1', ip: 6 });
  assert.deepEqual(urlHost(new URL('http://[::ffff:127.0.0.1]/')), { host: '::ffff:7f00:1', ip: 6 });
  assert.equal(classifyAddress(urlHost(new URL('http://[::ffff:127.0.0.1]/')).host), 'loopback');
  assert.deepEqual(urlHost(new URL('http://Example.COM./x')), { host: 'example.com', ip: 0 });
  assert.deepEqual(urlHost(new URL('http://2852039166/')), { host: '169.254.169.254', ip: 4 });
});
