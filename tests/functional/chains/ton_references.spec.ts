import { test } from '@japa/runner'
import { Address } from '@ton/core'
import { TransferLookupError } from '#chains/chain_family'
import {
  canonicalTonReference,
  parseTonReference,
  transactionHashHex,
} from '#plugins/ton/ton_references'
import { pickByHash } from '#plugins/ton/ton_verify'
import { fromBaseUnits, toBaseUnits } from '#support/text/money'
import { tonPaymentUri } from '#plugins/ton/ton_payment_uri'
import { TonFamily } from '#plugins/ton/ton_family'
import { TONCENTER_PACING_MARGIN } from '#plugins/ton/ton_budget'

const RAW = '0:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a8'
const HASH = '9f4c6c2a1d3b5e7f00112233445566778899aabbccddeeff0011223344556677'

test.group('TON references: parsing', () => {
  test('canonical ton:<raw>:<lt>:<hash>, read from the right', ({ assert }) => {
    const parsed = parseTonReference(`ton:${RAW}:47000000000003:${HASH}`)
    assert.equal(parsed.kind, 'canonical')
    if (parsed.kind !== 'canonical') return
    assert.isTrue(Address.parseRaw(RAW).equals(parsed.account as Address))
    assert.equal(parsed.lt, 47000000000003n)
    assert.equal(parsed.hash, HASH)
  })

  test('canonical form also takes a user-friendly address and upper-case hex', ({ assert }) => {
    const friendly = Address.parseRaw(RAW).toString({ bounceable: false })
    const parsed = parseTonReference(`  TON:${friendly}:5:${HASH.toUpperCase()} `)
    assert.deepInclude(parsed, { kind: 'canonical', lt: 5n, hash: HASH })
  })

  test('<lt>:<hash> and a bare hash (hex, or base64 as toncenter shows it)', ({ assert }) => {
    assert.deepEqual(parseTonReference(`12:${HASH}`), { kind: 'lt-hash', lt: 12n, hash: HASH })
    assert.deepEqual(parseTonReference(HASH), { kind: 'hash', hash: HASH })
    const base64 = Buffer.from(HASH, 'hex').toString('base64')
    assert.deepEqual(parseTonReference(base64), { kind: 'hash', hash: HASH })
    assert.equal(transactionHashHex(Buffer.from(HASH, 'hex').toString('base64url')), HASH)
  })

  test('malformed references are refused with the accepted forms', ({ assert }) => {
    for (const bad of [
      'ton:0:abc:1',
      `ton:${RAW}:x:${HASH}`,
      `ton:${RAW}:0:${HASH}`,
      `ton:nonsense:1:${HASH}`,
      `${HASH}:1`,
      'abc',
      `1:2:${HASH}`,
    ]) {
      assert.throws(() => parseTonReference(bad), TransferLookupError as any)
      assert.throws(
        () => parseTonReference(bad),
        /expected ton:<address>:<lt>:<hash>, <lt>:<hash> or a 64-hex/
      )
    }
  })

  test('the canonical form written back is lower-case raw', ({ assert }) => {
    const account = Address.parseRaw(RAW)
    assert.equal(canonicalTonReference(account, 99n, HASH.toUpperCase()), `ton:${RAW}:99:${HASH}`)
    const parsed = parseTonReference(canonicalTonReference(account, 99n, HASH))
    assert.equal(parsed.kind, 'canonical')
  })
})

test.group('TON references: bare hash search', () => {
  const candidates = [
    { id: 'a', hash: 'a'.repeat(64), inMessageHash: '1'.repeat(64) },
    { id: 'b', hash: 'b'.repeat(64), inMessageHash: '2'.repeat(64) },
    { id: 'c', hash: 'c'.repeat(64), inMessageHash: null },
  ]

  test('matches a transaction hash or an incoming message hash', ({ assert }) => {
    assert.equal(pickByHash(candidates, 'b'.repeat(64), 'W').id, 'b')
    assert.equal(pickByHash(candidates, '1'.repeat(64), 'W').id, 'a')
  })

  test('absent or ambiguous: a lookup error that says so', ({ assert }) => {
    assert.throws(
      () => pickByHash(candidates, 'd'.repeat(64), 'W'),
      /not found among the recent transactions of W/
    )
    const twice = [...candidates, { id: 'd', hash: 'd'.repeat(64), inMessageHash: 'a'.repeat(64) }]
    assert.throws(
      () => pickByHash(twice, 'a'.repeat(64), 'W'),
      /ambiguous: 2 transactions of W match it; give the reference as <lt>:<hash>/
    )
    assert.throws(() => pickByHash(twice, 'a'.repeat(64), 'W'), TransferLookupError as any)
  })
})

test.group('TON amounts and payment URIs', () => {
  test('base units ⇄ token units, exact', ({ assert }) => {
    assert.equal(fromBaseUnits(13_800_000n, 6), '13.8')
    assert.equal(fromBaseUnits(1n, 9), '0.000000001')
    assert.equal(
      fromBaseUnits(123456789012345678901234567890n, 9),
      '123456789012345678901.23456789'
    )
    assert.equal(toBaseUnits('5.0001', 9), 5000100000n)
    assert.equal(toBaseUnits('13.8', 6), 13800000n)
    assert.throws(() => toBaseUnits('0.0000001', 6), /cannot be expressed/)
  })

  test('ton://transfer links', ({ assert }) => {
    const wallet = new TonFamily().normalizeAddress(RAW)
    const master = 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs'
    const order = { receiveAddress: wallet, actualAmount: '13.8' } as any
    assert.equal(
      tonPaymentUri({ chain: {} as any, order, token: { contract: master, decimals: 6 } as any }),
      `ton://transfer/${wallet}?jetton=${master}&amount=13800000`
    )
    assert.equal(
      tonPaymentUri({
        chain: {} as any,
        order: { ...order, actualAmount: '2.5' },
        token: { contract: null, decimals: 9 } as any,
      }),
      `ton://transfer/${wallet}?amount=2500000000`
    )
  })
})

test.group('TON request budget and cost', () => {
  test('toncenter: 1 request/s without a key, 10/s with one (paced a little under), no daily cap', ({
    assert,
  }) => {
    const family = new TonFamily()
    const url = 'https://toncenter.com/api/v2/jsonRPC'
    assert.deepEqual(family.rpcBudget(url, ''), {
      perSecond: 1 * TONCENTER_PACING_MARGIN,
      perDay: null,
    })
    assert.deepEqual(family.rpcBudget(url, 'key'), {
      perSecond: 10 * TONCENTER_PACING_MARGIN,
      perDay: null,
    })
  })

  test("requests per day: one getTransactions per wallet and token per run (TON shares the wallet's), one balance read per wallet and token per reading", ({
    assert,
  }) => {
    const family = new TonFamily()
    const chain = { scanIntervalSeconds: 5 } as any
    // USDT + TON, one wallet, every 5 s: 17,280 runs × 2; readings every 10 minutes (the default): 144 × 2
    assert.equal(family.requestsPerDay(chain, 1, 2), 34_560 + 288)
    assert.equal(family.requestsPerDay(chain, 2, 2), 69_120 + 576)
    assert.equal(family.requestsPerDay({ scanIntervalSeconds: 30 } as any, 10, 3), 86_400 + 4_320)
    assert.equal(family.requestsPerDay(chain, 3, 0), 3 * 17_280)
  })
})
