import { randomBytes } from 'node:crypto'
import { test } from '@japa/runner'
import { Address } from '@ton/core'
import { crc16 } from '@ton/core/dist/utils/crc16.js'
import {
  friendlyTonAddress,
  parseTonAddress,
  rawTonAddress,
  sameTonAddress,
} from '#plugins/ton/ton_address'

/**
 * plugins/ton/ton_address.ts reads and writes TON addresses without
 * @ton/core (kept out of the web process); @ton/core is the reference it is
 * checked against, on random accounts of both workchains in every form.
 */
const FLAGS = [
  { bounceable: true, testOnly: false },
  { bounceable: false, testOnly: false },
  { bounceable: true, testOnly: true },
  { bounceable: false, testOnly: true },
]

test.group('TON addresses without @ton/core', () => {
  test('500 random accounts: every form parses and is written as @ton/core writes it', ({
    assert,
  }) => {
    for (let index = 0; index < 500; index++) {
      const reference = new Address(index % 2 === 0 ? 0 : -1, randomBytes(32))
      const raw = reference.toRawString()
      const parsedRaw = parseTonAddress(raw)!
      assert.isNotNull(parsedRaw, raw)
      assert.equal(rawTonAddress(parsedRaw.address), raw)
      assert.isTrue(reference.equals(parsedRaw.address as Address))
      for (const flags of FLAGS) {
        for (const urlSafe of [true, false]) {
          const friendly = reference.toString({ ...flags, urlSafe })
          assert.equal(friendlyTonAddress(parsedRaw.address, { ...flags, urlSafe }), friendly)
          const parsed = parseTonAddress(friendly)!
          assert.isNotNull(parsed, friendly)
          const expected = Address.parseFriendly(friendly)
          assert.equal(parsed.bounceable, expected.isBounceable)
          assert.equal(parsed.testOnly, expected.isTestOnly)
          assert.isTrue(sameTonAddress(parsed.address, parsedRaw.address))
        }
      }
    }
  })

  test('a changed character breaks the checksum: refused, as @ton/core refuses it', ({
    assert,
  }) => {
    for (let index = 0; index < 200; index++) {
      const friendly = new Address(0, randomBytes(32)).toString({ bounceable: index % 2 === 0 })
      const position = index % 46
      const replacement = friendly[position] === 'A' ? 'B' : 'A'
      const broken = friendly.slice(0, position) + replacement + friendly.slice(position + 1)
      assert.isNull(parseTonAddress(broken), broken)
      assert.throws(() => Address.parseFriendly(broken))
    }
  })

  test('refused: other workchains, unknown tags, wrong lengths and characters', ({ assert }) => {
    const hash = randomBytes(32)
    const hex = hash.toString('hex')
    // Valid for @ton/core, but no such workchain exists: nothing could be received there.
    assert.isNull(parseTonAddress(`5:${hex}`))
    assert.isNull(parseTonAddress(new Address(5, hash).toString()))
    assert.isNull(parseTonAddress(`0:${hex.slice(1)}`))
    assert.isNull(parseTonAddress(`0:${hex}0`))
    assert.isNull(parseTonAddress(`0:${hex.slice(2)}zz`))
    assert.isNull(parseTonAddress(`x:${hex}`))
    // A tag that is neither 0x11 nor 0x51, with a correct checksum.
    const bytes = Buffer.from(new Address(0, hash).toString({ urlSafe: false }), 'base64')
    bytes[0] = 0x22
    const wrongTag = rechecksum(bytes)
    assert.isNull(parseTonAddress(wrongTag))
    assert.throws(() => Address.parseFriendly(wrongTag))
    assert.isNull(parseTonAddress(new Address(0, hash).toString().slice(1)))
    assert.isNull(parseTonAddress(`${new Address(0, hash).toString().slice(1)}!`))
    assert.isNull(parseTonAddress(''))
  })
})

/** The 36 bytes with the CRC-16 of their first 34 written again (@ton/core's own CRC), in base64url. */
function rechecksum(bytes: Buffer): string {
  crc16(bytes.subarray(0, 34)).copy(bytes, 34)
  return bytes.toString('base64url')
}
