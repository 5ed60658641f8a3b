import { test } from '@japa/runner'
import { isPrivateAddress } from '#callbacks/safe_http'

/**
 * IPv6 forms that carry or reach an IPv4 address: a callback to one of them
 * could land on a private IPv4 host through a translator or relay, so every
 * address of these ranges is refused, whatever IPv4 address it embeds.
 */
const TRANSLATION_RANGES: { range: string; inside: string[]; justOutside: string[] }[] = [
  {
    range: 'NAT64 64:ff9b::/96',
    inside: ['64:ff9b::7f00:1', '64:ff9b::808:808', '64:ff9b::ffff:ffff'],
    justOutside: ['64:ff9b::1:0:0'],
  },
  {
    range: 'NAT64 local-use 64:ff9b:1::/48',
    inside: ['64:ff9b:1::a00:1', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff', '64:ff9b:1::808:808'],
    justOutside: ['64:ff9b:2::808:808'],
  },
  {
    range: '6to4 2002::/16',
    inside: ['2002:7f00:1::1', '2002:808:808::1', '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
    justOutside: ['2003::1'],
  },
  {
    range: 'Teredo 2001::/32',
    inside: [
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '2001::1',
      '2001:0:ffff:ffff:ffff:ffff:ffff:ffff',
    ],
    justOutside: ['2001:1::1'],
  },
  {
    range: 'IPv4-compatible ::/96',
    inside: ['::7f00:1', '::808:808', '::a00:1', '::ffff:ffff'],
    justOutside: ['::1:0:0'],
  },
]

test.group('Callback target address check', () => {
  for (const { range, inside, justOutside } of TRANSLATION_RANGES) {
    test(`refuses ${range}`, ({ assert }) => {
      for (const address of inside) assert.isTrue(isPrivateAddress(address), address)
      for (const address of justOutside) assert.isFalse(isPrivateAddress(address), address)
    })
  }

  test('public IPv6 and IPv4 addresses stay allowed', ({ assert }) => {
    for (const address of [
      '2606:4700:4700::1111',
      '2a00:1450:4001:81c::200e',
      '2001:4860:4860::8888',
      '8.8.8.8',
      '::ffff:8.8.8.8',
    ]) {
      assert.isFalse(isPrivateAddress(address), address)
    }
  })

  test('local ranges are still refused, also IPv4-mapped in hex form', ({ assert }) => {
    for (const address of [
      '::',
      '::1',
      'fe80::1',
      'fd12::1',
      'ff02::1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
    ]) {
      assert.isTrue(isPrivateAddress(address), address)
    }
  })
})
