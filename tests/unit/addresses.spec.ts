import { test } from '@japa/runner'
import { EvmFamily } from '#plugins/evm/evm_family'
import { TronFamily } from '#plugins/tron/tron_family'
import { SolanaFamily } from '#plugins/solana/solana_family'
import { TonFamily } from '#plugins/ton/ton_family'
import { InvalidAddressError } from '#chains/chain_family'
import { randomBytes } from 'node:crypto'
import { getAddress, isAddress } from 'viem'
import { checksumEvmAddress, isEvmAddress } from '#plugins/evm/evm_address'

test.group('Addresses: EVM', () => {
  const evm = new EvmFamily()

  test('normalises to the EIP-55 checksum', ({ assert }) => {
    assert.equal(
      evm.normalizeAddress('0x52908400098527886e0f7030069857d2e4169ee7'),
      '0x52908400098527886E0F7030069857D2E4169EE7'
    )
    assert.equal(
      evm.normalizeAddress('0x52908400098527886E0F7030069857D2E4169EE7'),
      '0x52908400098527886E0F7030069857D2E4169EE7'
    )
  })

  test('refuses a wrong checksum, a wrong length and non-hex', ({ assert }) => {
    assert.throws(
      () => evm.normalizeAddress('0x52908400098527886e0F7030069857D2E4169EE7'),
      /checksum/
    )
    assert.throws(() => evm.normalizeAddress('0x5290840009852788'), /not an EVM address/)
    assert.throws(
      () => evm.normalizeAddress('0xZZ908400098527886e0f7030069857d2e4169ee7'),
      InvalidAddressError
    )
    assert.throws(
      () => evm.normalizeAddress('TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf'),
      InvalidAddressError
    )
  })

  test('the checksum (computed without viem) agrees with viem on 500 random addresses', ({
    assert,
  }) => {
    for (let index = 0; index < 500; index++) {
      const lower = `0x${randomBytes(20).toString('hex')}`
      const expected = getAddress(lower)
      assert.equal(checksumEvmAddress(lower), expected)
      // lower case, the checksum, all upper case, one letter flipped
      const upper = `0x${lower.slice(2).toUpperCase()}`
      const flipAt = [...expected].findIndex((char, at) => at > 1 && /[a-fA-F]/.test(char))
      const flipped =
        flipAt < 0
          ? expected
          : expected.slice(0, flipAt) +
            (expected[flipAt] === expected[flipAt].toUpperCase()
              ? expected[flipAt].toLowerCase()
              : expected[flipAt].toUpperCase()) +
            expected.slice(flipAt + 1)
      for (const candidate of [lower, expected, upper, flipped]) {
        assert.equal(
          isEvmAddress(candidate),
          isAddress(candidate, { strict: true }),
          `isEvmAddress(${candidate})`
        )
      }
    }
  })
})

test.group('Addresses: TRON', () => {
  const tron = new TronFamily()

  test('accepts base58check T addresses', ({ assert }) => {
    assert.equal(
      tron.normalizeAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'),
      'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'
    )
  })

  test('refuses a broken checksum, EVM hex and garbage', ({ assert }) => {
    assert.throws(() => tron.normalizeAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u'), /TRON/)
    assert.throws(() => tron.normalizeAddress('0x52908400098527886E0F7030069857D2E4169EE7'), /TRON/)
    assert.throws(() => tron.normalizeAddress('hello'), InvalidAddressError)
  })

  test('refuses a valid base58check that is not a TRON address', ({ assert }) => {
    // A Bitcoin address is valid base58check but has another prefix byte.
    assert.throws(() => tron.normalizeAddress('1BoatSLRHtKNngkdXEeobR76b53LETtpyT'), /TRON/)
  })
})

test.group('Addresses: Solana', () => {
  const solana = new SolanaFamily()

  test('accepts a 32-byte base58 key', ({ assert }) => {
    assert.equal(
      solana.normalizeAddress('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'),
      'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'
    )
  })

  test('refuses wrong lengths and non-base58 characters', ({ assert }) => {
    assert.throws(() => solana.normalizeAddress('EPjFWdd5AufqSSqeM2qN1xzyb'), /Solana/)
    assert.throws(() => solana.normalizeAddress('0OIl' + 'a'.repeat(40)), /Solana/)
  })
})

test.group('Addresses: TON', () => {
  const ton = new TonFamily()
  const raw = '0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe'

  test('accepts raw and friendly forms and stores one canonical form', ({ assert }) => {
    const fromRaw = ton.normalizeAddress(raw)
    const fromBounceable = ton.normalizeAddress('EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs')
    assert.equal(fromRaw, fromBounceable)
    assert.match(fromRaw, /^UQ/)
    assert.equal(ton.normalizeAddress(fromRaw), fromRaw)
  })

  test('refuses broken addresses', ({ assert }) => {
    assert.throws(
      () => ton.normalizeAddress('EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDt'),
      /TON/
    )
    assert.throws(() => ton.normalizeAddress('0:xyz'), /TON/)
    assert.throws(() => ton.normalizeAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'), /TON/)
  })
})
