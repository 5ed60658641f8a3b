import { test } from '@japa/runner'
import { parseTrustProxy } from '#support/http/trust_proxy'

test.group('TRUST_PROXY values', () => {
  test('loopback by default', ({ assert }) => {
    for (const value of [undefined, '', 'loopback', ' LOOPBACK ']) {
      const trust = parseTrustProxy(value)
      assert.isTrue(trust('127.0.0.1', 0), String(value))
      assert.isTrue(trust('::1', 0), String(value))
      assert.isFalse(trust('10.0.0.1', 0), String(value))
    }
  })

  test('none trusts nobody, true everybody', ({ assert }) => {
    for (const value of ['none', 'false']) assert.isFalse(parseTrustProxy(value)('127.0.0.1', 0))
    assert.isTrue(parseTrustProxy('true')('203.0.113.9', 3))
  })

  test('a list of addresses, CIDR ranges and named ranges', ({ assert }) => {
    const trust = parseTrustProxy('10.0.0.0/8, 192.168.1.10 fd00::/8,loopback')
    for (const address of ['10.1.2.3', '192.168.1.10', 'fd12::1', '127.0.0.1'])
      assert.isTrue(trust(address, 0), address)
    for (const address of ['11.0.0.1', '192.168.1.11', 'fe80::1', '203.0.113.9'])
      assert.isFalse(trust(address, 0), address)
  })

  test('anything else is refused with a message naming the entry', ({ assert }) => {
    for (const entry of [
      'bogus',
      '10.0.0.0/33',
      'fd00::/129',
      '10.0.0.1/8/9',
      '300.1.1.1',
      '10.0.0.0/',
      'yes',
    ]) {
      assert.throws(
        () => parseTrustProxy(`10.0.0.0/8,${entry}`),
        new RegExp(`TRUST_PROXY: "${entry.replace(/[./]/g, '\\$&')}" is not`)
      )
    }
  })
})
