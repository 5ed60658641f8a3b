import { test } from '@japa/runner'
import Chain from '#models/chain'
import { evmRequestsPerDay, evmRpcBudget } from '#plugins/evm/evm_budget'

function chain(
  fields: Partial<Pick<Chain, 'scanIntervalSeconds' | 'blockTimeMs' | 'confirmations'>> = {}
) {
  const made = new Chain()
  made.merge({
    scanIntervalSeconds: 15,
    blockTimeMs: 12_000,
    confirmations: 12,
    options: { blockRange: 1000 },
    ...fields,
  })
  return made
}

test.group('EVM request budgets', () => {
  test('free tiers by provider host; unknown hosts get none from the family', ({ assert }) => {
    assert.deepEqual(evmRpcBudget('https://mainnet.infura.io/v3/abc'), {
      perSecond: 6,
      perDay: 37_500,
    })
    assert.deepEqual(evmRpcBudget('https://eth-mainnet.g.alchemy.com/v2/abc'), {
      perSecond: 6,
      perDay: null,
    })
    assert.deepEqual(evmRpcBudget('https://bsc-dataseed.bnbchain.org'), {
      perSecond: 30,
      perDay: null,
    })
    assert.deepEqual(evmRpcBudget('https://bsc-dataseed1.binance.org/'), {
      perSecond: 30,
      perDay: null,
    })
    assert.isNull(evmRpcBudget('https://ethereum-rpc.publicnode.com'))
    assert.isNull(evmRpcBudget('https://notinfura.io.example.com'))
    assert.isNull(evmRpcBudget('not a url'))
  })

  test('scanning follows the interval and block time, not the number of addresses; the balance watch reads each address', ({
    assert,
  }) => {
    // Ethereum defaults: 15 s, 12 s blocks → 2 blocks a run: head 1 + the 2 blocks
    // + logs (1 segment + 1 window) + native window (2 blocks + the head) = 8 calls, 5760 runs;
    // balance watch every 10 minutes: 144 readings × addresses × tokens.
    assert.equal(evmRequestsPerDay(chain(), 1, 3, 10), 46_080 + 144 * 3)
    assert.equal(evmRequestsPerDay(chain(), 500, 3, 10), 46_080 + 144 * 1500)
    assert.equal(evmRequestsPerDay(chain(), 500, 3, 0), 46_080, 'the balance watch off')
    // Twice the interval: half the runs, a few more blocks each.
    assert.equal(
      evmRequestsPerDay(chain({ scanIntervalSeconds: 30 }), 1, 3, 0),
      2880 * (1 + 3 + 2 + 4)
    )
    // Traces asked for: one more call per block.
    const traced = chain()
    traced.options = { blockRange: 1000, traces: 'debug' }
    assert.equal(evmRequestsPerDay(traced, 1, 3, 0), 5760 * (8 + 2))
    // No wallet or no token: nothing is scanned.
    assert.equal(evmRequestsPerDay(chain(), 0, 3), 0)
    assert.equal(evmRequestsPerDay(chain(), 1, 0), 0)
  })
})
