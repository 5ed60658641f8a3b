import { test } from '@japa/runner'
import Chain from '#models/chain'
import { evmRequestsPerDay, evmRpcBudget } from '#plugins/evm/evm_budget'

function chain(fields: Partial<Pick<Chain, 'scanIntervalSeconds' | 'blockTimeMs' | 'confirmations'>> = {}) {
  const made = new Chain()
  made.merge({ scanIntervalSeconds: 15, blockTimeMs: 12_000, confirmations: 12, options: { blockRange: 1000 }, ...fields })
  return made
}

test.group('EVM request budgets', () => {
  test('free tiers by provider host; unknown hosts get none from the family', ({ assert }) => {
    assert.deepEqual(evmRpcBudget('https://mainnet.infura.io/v3/abc'), { perSecond: 6, perDay: 37_500 })
    assert.deepEqual(evmRpcBudget('https://eth-mainnet.g.alchemy.com/v2/abc'), { perSecond: 6, perDay: null })
    assert.deepEqual(evmRpcBudget('https://bsc-dataseed.bnbchain.org'), { perSecond: 30, perDay: null })
    assert.deepEqual(evmRpcBudget('https://bsc-dataseed1.binance.org/'), { perSecond: 30, perDay: null })
    assert.isNull(evmRpcBudget('https://ethereum-rpc.publicnode.com'))
    assert.isNull(evmRpcBudget('https://notinfura.io.example.com'))
    assert.isNull(evmRpcBudget('not a url'))
  })

  test('requests per day follow the interval and block time, not the number of addresses', ({ assert }) => {
    // Ethereum defaults: 15 s, 12 s blocks → 2 blocks a run:
    // 2 + logs (1 + 1 + 1) + native (2 + 2 + 1) = 10 calls, 5760 runs.
    assert.equal(evmRequestsPerDay(chain(), 1, 3), 57_600)
    assert.equal(evmRequestsPerDay(chain(), 500, 3), 57_600)
    // Twice the interval: half the runs, a few more blocks each.
    assert.equal(evmRequestsPerDay(chain({ scanIntervalSeconds: 30 }), 1, 3), 2880 * (2 + 3 + 3 + 3 + 1))
    // No wallet or no token: nothing is scanned.
    assert.equal(evmRequestsPerDay(chain(), 0, 3), 0)
    assert.equal(evmRequestsPerDay(chain(), 1, 0), 0)
  })
})
