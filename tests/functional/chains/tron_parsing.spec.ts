import { test } from '@japa/runner'
import { utils } from 'tronweb'
import Chain from '#models/chain'
import Token from '#models/token'
import { TransferLookupError } from '#chains/chain_family'
import { parseTransactionId } from '#plugins/tron/tron_reference'
import {
  tronAddressFromHex,
  tronAddressFromWord,
  tronAddressToHex,
} from '#plugins/tron/tron_addresses'
import { TRANSFER_TOPIC, transfersOf } from '#plugins/tron/tron_transfers'
import { fromBaseUnits } from '#support/text/money'
import { MAX_REPORTED, pruneReported, readCursor } from '#plugins/tron/tron_scan_cursor'
import { TronFamily } from '#plugins/tron/tron_family'
import type { TronTransaction } from '#plugins/tron/trongrid_client'
import { newTronAccount, transferCallData } from '#tests/helpers/tron/tron_transactions'

const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'

function token(contract: string | null, decimals: number) {
  const entry = new Token()
  entry.merge({
    network: 'tron',
    symbol: contract ? 'USDT' : 'TRX',
    contract,
    decimals,
    amountPrecision: 2,
    enabled: true,
  })
  return entry
}

const facts = { reference: 'ab'.repeat(32), timestamp: 1_700_000_000_000, confirmations: 20 }

test.group('TRON parsing: references', () => {
  test('a 64-hex id, bare or 0x-prefixed, any case, becomes bare lower case', ({ assert }) => {
    const id = 'A1b2'.repeat(16)
    assert.equal(parseTransactionId(id), id.toLowerCase())
    assert.equal(parseTransactionId(`0x${id}`), id.toLowerCase())
    assert.equal(parseTransactionId(`0X${id}`), id.toLowerCase())
    assert.equal(parseTransactionId(`  ${id.toUpperCase()} `), id.toLowerCase())
  })

  test('anything else is a lookup error naming the expected form', ({ assert }) => {
    for (const bad of [
      '',
      'abc',
      'a'.repeat(63),
      'a'.repeat(65),
      'g'.repeat(64),
      `tron:${'a'.repeat(64)}`,
    ]) {
      assert.throws(() => parseTransactionId(bad), TransferLookupError)
    }
    assert.throws(() => parseTransactionId('xyz'), /64 hex characters/)
  })
})

test.group('TRON parsing: addresses', () => {
  test('hex forms (41-prefixed, 0x, bare 20 bytes, ABI word) map to the same T-address', ({
    assert,
  }) => {
    for (let index = 0; index < 5; index++) {
      const account = newTronAccount()
      const body = account.hex.slice(2)
      assert.equal(tronAddressFromHex(account.hex), account.address)
      assert.equal(tronAddressFromHex(account.hex.toUpperCase()), account.address)
      assert.equal(tronAddressFromHex(`0x${body}`), account.address)
      assert.equal(tronAddressFromHex(body), account.address)
      assert.equal(tronAddressFromWord(body.padStart(64, '0')), account.address)
      assert.equal(tronAddressToHex(account.address), account.hex)
      assert.equal(utils.address.fromHex(account.hex), account.address)
    }
    assert.equal(tronAddressFromHex('41a614f803b6fd780986a42c78ec9c7f77e6ded13c'), USDT)
  })

  test('wrong lengths are refused', ({ assert }) => {
    assert.throws(() => tronAddressFromHex('41a614f803'), /not a hex TRON address/)
    assert.throws(() => tronAddressFromHex(`42${'a'.repeat(40)}`), /not a hex TRON address/)
    assert.throws(() => tronAddressFromWord('abcd'), /32-byte word/)
  })
})

test.group('TRON parsing: amounts and transfers', () => {
  test('base units become exact token units', ({ assert }) => {
    assert.equal(fromBaseUnits('13800000', 6), '13.8')
    assert.equal(fromBaseUnits('1', 6), '0.000001')
    assert.equal(fromBaseUnits('0', 6), '0')
    assert.equal(
      fromBaseUnits(123456789012345678901234567890n, 18),
      '123456789012.34567890123456789'
    )
    assert.equal(fromBaseUnits('9007199254740993', 6), '9007199254.740993')
  })

  test('a successful TRC-20 call is read from its Transfer log', ({ assert }) => {
    const to = newTronAccount()
    const transaction: TronTransaction = {
      txID: facts.reference,
      ret: [{ contractRet: 'SUCCESS' }],
      raw_data: {
        contract: [
          {
            type: 'TriggerSmartContract',
            // The call data says 1 USDT, the log 2: the log (what happened) wins.
            parameter: {
              value: {
                data: transferCallData(to.address, 1_000_000n),
                contract_address: tronAddressToHex(USDT),
              },
            },
          },
        ],
      },
    }
    const info = {
      id: facts.reference,
      blockNumber: 10,
      blockTimeStamp: facts.timestamp,
      receipt: { result: 'SUCCESS' },
      log: [
        {
          address: tronAddressToHex(USDT).slice(2),
          topics: [TRANSFER_TOPIC, '0'.repeat(64), to.hex.slice(2).padStart(64, '0')],
          data: 2_000_000n.toString(16).padStart(64, '0'),
        },
        { address: tronAddressToHex(USDT).slice(2), topics: ['1'.repeat(64)], data: '' },
      ],
    }
    assert.deepEqual(transfersOf(transaction, info, [token(USDT, 6)], facts), [
      { ...facts, position: 'log:0', to: to.address, contract: USDT, amount: '2', success: true },
    ])
  })

  test('a reverted TRC-20 call is read from its call data, as failed', ({ assert }) => {
    const to = newTronAccount()
    const from = newTronAccount()
    const call = (data: string): TronTransaction => ({
      txID: facts.reference,
      ret: [{ contractRet: 'REVERT' }],
      raw_data: {
        contract: [
          {
            type: 'TriggerSmartContract',
            parameter: { value: { data, contract_address: tronAddressToHex(USDT) } },
          },
        ],
      },
    })
    const info = {
      id: facts.reference,
      blockNumber: 10,
      blockTimeStamp: facts.timestamp,
      result: 'FAILED',
      receipt: { result: 'REVERT' },
    }
    const expected = [
      {
        ...facts,
        position: 'call',
        to: to.address,
        contract: USDT,
        amount: '13.8',
        success: false,
      },
    ]
    assert.deepEqual(
      transfersOf(call(transferCallData(to.address, 13_800_000n)), info, [token(USDT, 6)], facts),
      expected
    )
    const transferFrom =
      '23b872dd' +
      from.hex.slice(2).padStart(64, '0') +
      to.hex.slice(2).padStart(64, '0') +
      13_800_000n.toString(16).padStart(64, '0')
    assert.deepEqual(transfersOf(call(transferFrom), info, [token(USDT, 6)], facts), expected)
    assert.deepEqual(transfersOf(call('095ea7b3'), info, [token(USDT, 6)], facts), [])
  })

  test('a TRX transfer is read from its TransferContract, in sun', ({ assert }) => {
    const to = newTronAccount()
    const transaction: TronTransaction = {
      txID: facts.reference,
      ret: [{ contractRet: 'SUCCESS' }],
      raw_data: {
        contract: [
          {
            type: 'TransferContract',
            parameter: { value: { amount: 50_000_001, to_address: to.hex } },
          },
        ],
      },
    }
    const info = { id: facts.reference, blockNumber: 10, blockTimeStamp: facts.timestamp }
    assert.deepEqual(transfersOf(transaction, info, [token(null, 6)], facts), [
      {
        ...facts,
        position: 'value',
        to: to.address,
        contract: null,
        amount: '50.000001',
        success: true,
      },
    ])
  })
})

test.group('TRON parsing: cursor and payment URI', () => {
  test('an unreadable cursor starts over; a good one is kept', ({ assert }) => {
    const fresh = { since: 5, lagging: {}, reported: {}, deepDoneAt: 5, deep: null, balances: null }
    assert.deepEqual(readCursor(null, 5), fresh)
    assert.deepEqual(readCursor({ block: 12 }, 5), fresh)
    // A cursor from before deep re-scans gets one at the next run.
    assert.deepEqual(readCursor({ since: 9, lagging: { a: 7, b: 'x' }, reported: { k: 8 } }, 5), {
      since: 9,
      lagging: { a: 7 },
      reported: { k: 8 },
      deepDoneAt: 0,
      deep: null,
      balances: null,
    })
    const deep = { startedAt: 20, until: 8, from: { a: 3, b: 'x' } }
    assert.deepEqual(
      readCursor({ since: 9, lagging: {}, reported: {}, deepDoneAt: 4, deep }, 5).deep,
      {
        startedAt: 20,
        until: 8,
        from: { a: 3 },
      }
    )
    assert.isNull(readCursor({ since: 9, deep: { until: 8, from: {} } }, 5).deep)
  })

  test('reported transfers are kept inside the window and bounded', ({ assert }) => {
    assert.deepEqual(pruneReported({ old: 1, edge: 10, new: 20 }, 10), { edge: 10, new: 20 })
    const many: Record<string, number> = {}
    for (let index = 0; index < MAX_REPORTED + 10; index++) many[`k${index}`] = index
    const kept = pruneReported(many, 0)
    assert.lengthOf(Object.keys(kept), MAX_REPORTED)
    assert.notProperty(kept, 'k0')
    assert.property(kept, `k${MAX_REPORTED + 9}`)
  })

  test('paymentUri: tron:<address>?token=<contract>&amount= / ?amount=', ({ assert }) => {
    const family = new TronFamily()
    const order = {
      receiveAddress: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
      actualAmount: '13.80',
    } as any
    assert.equal(
      family.paymentUri({ chain: {} as any, token: token(USDT, 6), order }),
      `tron:TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf?token=${USDT}&amount=13.8`
    )
    assert.equal(
      family.paymentUri({ chain: {} as any, token: token(null, 6), order }),
      'tron:TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf?amount=13.8'
    )
  })
})

test.group('TRON budgets and cost', () => {
  const family = new TronFamily()
  const chain = (scanIntervalSeconds: number, options: Record<string, unknown> = {}) => {
    const entry = new Chain()
    entry.merge({ network: 'tron', family: 'tron', scanIntervalSeconds, options })
    return entry
  }

  test('TronGrid with a key: 100,000 a day at 15/s; without: 2/s; other endpoints left to the core', ({
    assert,
  }) => {
    assert.deepEqual(family.rpcBudget('https://api.trongrid.io', 'key'), {
      perSecond: 15,
      perDay: 100_000,
    })
    assert.deepEqual(family.rpcBudget('https://nile.trongrid.io/', 'key'), {
      perSecond: 15,
      perDay: 100_000,
    })
    assert.deepEqual(family.rpcBudget('https://api.trongrid.io', ''), {
      perSecond: 2,
      perDay: null,
    })
    assert.isNull(family.rpcBudget('http://127.0.0.1:8090', ''))
    assert.isNull(family.rpcBudget('https://trongrid.io.evil.example', 'key'))
    assert.isNull(family.rpcBudget('not a url', 'key'))
  })

  test('requests per day: runs × (2 heads + listings) + hourly deep listings + balance readings (2 heads + reads)', ({
    assert,
  }) => {
    // One wallet, USDT, USDC and TRX at the default 5 s: 17,280 runs × 5 + 24 × 3,
    // and a balance reading every 10 minutes (the default): 144 × (2 + 3).
    assert.equal(family.requestsPerDay(chain(5), 1, 3), 86_472 + 720)
    assert.equal(family.requestsPerDay(chain(30), 10, 3), 2880 * 32 + 24 * 30 + 144 * 32)
    assert.equal(family.requestsPerDay(chain(5, { deepScanHours: 0 }), 1, 3), 86_400 + 720)
    assert.equal(
      family.requestsPerDay(chain(60, { deepScanEveryMinutes: 120 }), 2, 1),
      1440 * 4 + 12 * 2 + 144 * 4
    )
    assert.equal(family.requestsPerDay(chain(5), 1, 3, 0), 86_472, 'the balance watch off')
    assert.equal(family.requestsPerDay(chain(5), 1, 3, 60), 86_472 + 24 * 5)
    assert.equal(family.requestsPerDay(chain(5), 0, 3), 0, 'no wallet: no scan')
  })

  test('options: defaults, bounds and unknown names', ({ assert }) => {
    assert.deepEqual(family.validateOptions({ lookbackMinutes: ' 45 ', deepScanHours: '0' }), {
      lookbackMinutes: 45,
      deepScanHours: 0,
    })
    assert.throws(
      () => family.validateOptions({ lookbackMinutes: '9' }),
      /lookbackMinutes must be a whole number from 10 to 1440/
    )
    assert.throws(() => family.validateOptions({ deepScanEveryMinutes: '5' }), /from 10 to 1440/)
    assert.throws(
      () => family.validateOptions({ deepScanHours: '1.5' }),
      /deepScanHours must be a whole number/
    )
    assert.throws(() => family.validateOptions({ overlap: '10' }), /Unknown TRON option "overlap"/)
  })
})
