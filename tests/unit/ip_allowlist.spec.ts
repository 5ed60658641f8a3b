import { test } from '@japa/runner'
import { allowListIncludes, parseAllowListEntry, splitAllowList } from '#support/http/ip_allowlist'

test.group('API key IP allow-list entries', () => {
  test('addresses and CIDR ranges of both families are read', ({ assert }) => {
    assert.deepEqual(parseAllowListEntry('203.0.113.7'), {
      address: '203.0.113.7',
      prefix: null,
      type: 'ipv4',
    })
    assert.deepEqual(parseAllowListEntry('198.51.100.0/24'), {
      address: '198.51.100.0',
      prefix: 24,
      type: 'ipv4',
    })
    assert.deepEqual(parseAllowListEntry('2001:db8::/32'), {
      address: '2001:db8::',
      prefix: 32,
      type: 'ipv6',
    })
    assert.deepEqual(parseAllowListEntry('::1'), { address: '::1', prefix: null, type: 'ipv6' })
    assert.deepEqual(parseAllowListEntry('0.0.0.0/0'), {
      address: '0.0.0.0',
      prefix: 0,
      type: 'ipv4',
    })
  })

  test('anything else is not an entry', ({ assert }) => {
    for (const entry of [
      '999.1.1.1',
      '10.0.0',
      '10.0.0.0/33',
      '2001:db8::/129',
      'fe80::1%eth0',
      'example.com',
      '10.0.0.0/',
      '10.0.0.1/8/9',
      ' 10.0.0.1',
      '',
      '::::',
    ]) {
      assert.isNull(parseAllowListEntry(entry), entry)
    }
  })

  test('a written list is split on commas, spaces and new lines', ({ assert }) => {
    assert.deepEqual(
      splitAllowList(' 203.0.113.7,198.51.100.0/24\n2001:db8::/32 \r\n\t10.0.0.1,, '),
      ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32', '10.0.0.1']
    )
    assert.deepEqual(splitAllowList(''), [])
  })

  test('the request check: empty allows all; addresses, ranges, IPv4-mapped clients, IPv6', ({
    assert,
  }) => {
    assert.isTrue(allowListIncludes([], '203.0.113.9'))
    const list = ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32']
    for (const ip of [
      '203.0.113.7',
      '198.51.100.200',
      '::ffff:198.51.100.1',
      '2001:db8::1',
      '2001:db8:ffff::9',
    ]) {
      assert.isTrue(allowListIncludes(list, ip), ip)
    }
    for (const ip of ['203.0.113.8', '198.51.101.1', '2001:db9::1', '::1', 'not-an-ip', '']) {
      assert.isFalse(allowListIncludes(list, ip), ip)
    }
  })
})
