import { test } from '@japa/runner'
import { randomBytes } from 'node:crypto'
import { generateKeyPairSigner, getBase58Decoder, type Address } from '@solana/kit'
import { TOKEN_PROGRAM_ADDRESS, findAssociatedTokenPda } from '@solana-program/token'
import type Chain from '#models/chain'
import type Order from '#models/order'
import type Token from '#models/token'
import { InvalidAddressError, TransferLookupError } from '#chains/chain_family'
import { RpcPool, RpcUnavailableError } from '#chains/rpc_pool'
import { SolanaFamily } from '#plugins/solana/solana_family'
import { commitmentFor, confirmationsAt } from '#plugins/solana/solana_commitment'
import { solanaPayUri } from '#plugins/solana/solana_payment_uri'
import {
  readTransfers,
  succeeded,
  tokenAccountOwners,
  UnreadableTransactionError,
  type JsonParsedTransaction,
} from '#plugins/solana/solana_transfers'
import { TOKEN_2022_PROGRAM_ADDRESS } from '#plugins/solana/solana_programs'
import { fromBaseUnits } from '#support/text/money'

const SYSTEM = '11111111111111111111111111111111'

async function newAddress(): Promise<Address> {
  return (await generateKeyPairSigner()).address
}

function balance(accountIndex: number, mint: string, owner: string, amount: string) {
  return {
    accountIndex,
    mint,
    owner,
    programId: TOKEN_PROGRAM_ADDRESS,
    uiTokenAmount: { amount, decimals: 6 },
  }
}

/**
 * A transaction as @solana/kit hands back `jsonParsed` (integers upcast to
 * bigint), with every case the parser meets: SOL and token transfers at the
 * top level and inside a program's inner instructions, a `transfer` without
 * mint, a transfer to a token account that is not the wallet's associated
 * one, and instructions that move nothing to anyone.
 */
async function fixture() {
  const payer = await newAddress()
  const wallet = await newAddress()
  const mint = await newAddress()
  const other = await newAddress() // a token account of the wallet's, not its associated one
  const program = await newAddress()
  const [walletAccount] = await findAssociatedTokenPda({
    owner: wallet,
    mint,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  })
  const [payerAccount] = await findAssociatedTokenPda({
    owner: payer,
    mint,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  })
  const keys = [
    payer,
    wallet,
    walletAccount,
    other,
    payerAccount,
    mint,
    SYSTEM,
    TOKEN_PROGRAM_ADDRESS,
    program,
  ]
  const transaction: JsonParsedTransaction = {
    slot: 1000n,
    blockTime: 1_700_000_000n,
    meta: {
      err: null,
      preTokenBalances: [
        balance(2, mint, wallet, '0'),
        balance(3, mint, wallet, '0'),
        balance(4, mint, payer, '99000000'),
      ],
      postTokenBalances: [
        balance(2, mint, wallet, '13800250'),
        balance(3, mint, wallet, '5000000'),
        balance(4, mint, payer, '80199750'),
      ],
      innerInstructions: [
        {
          index: 3n,
          instructions: [
            {
              program: 'system',
              programId: SYSTEM,
              parsed: {
                type: 'transfer',
                info: { source: program, destination: wallet, lamports: 1n },
              },
            },
            {
              program: 'spl-token',
              programId: TOKEN_PROGRAM_ADDRESS,
              parsed: {
                type: 'transfer',
                info: {
                  source: payerAccount,
                  destination: walletAccount,
                  authority: payer,
                  amount: '250',
                },
              },
            },
          ],
        },
      ],
    },
    transaction: {
      signatures: ['sig'],
      message: {
        accountKeys: keys.map((pubkey) => ({ pubkey })),
        instructions: [
          {
            program: 'system',
            programId: SYSTEM,
            parsed: {
              type: 'transfer',
              info: { source: payer, destination: wallet, lamports: 1_500_000_000n },
            },
          },
          {
            program: 'spl-token',
            programId: TOKEN_PROGRAM_ADDRESS,
            parsed: {
              type: 'transferChecked',
              info: {
                source: payerAccount,
                mint,
                destination: walletAccount,
                authority: payer,
                tokenAmount: { amount: '13800000', decimals: 6n, uiAmountString: '13.8' },
              },
            },
          },
          {
            program: 'spl-token',
            programId: TOKEN_PROGRAM_ADDRESS,
            parsed: {
              type: 'transfer',
              info: {
                source: payerAccount,
                destination: other,
                authority: payer,
                amount: '5000000',
              },
            },
          },
          { programId: program, parsed: undefined },
          {
            program: 'system',
            programId: SYSTEM,
            parsed: {
              type: 'createAccount',
              info: { source: payer, newAccount: other, lamports: 2_039_280n, space: 165n },
            },
          },
        ],
      },
    },
  }
  return { transaction, wallet, mint, other, walletAccount }
}

test.group('Solana parsing', () => {
  test('amounts: base units to exact token units', ({ assert }) => {
    assert.equal(fromBaseUnits('13800000', 6), '13.8')
    assert.equal(fromBaseUnits(1n, 9), '0.000000001')
    assert.equal(fromBaseUnits(100_000_000n, 9), '0.1')
    assert.equal(fromBaseUnits('0', 6), '0')
    assert.equal(
      fromBaseUnits('123456789012345678901234567890', 6),
      '123456789012345678901234.56789'
    )
    assert.throws(() => fromBaseUnits('1.5', 6), /not a base-unit integer/)
    assert.throws(() => fromBaseUnits('-1', 6), /not a base-unit integer/)
  })

  test('every SOL and token transfer, top-level and inner; tokens reported to the wallet owning the receiving account, associated or not', async ({
    assert,
  }) => {
    const { transaction, wallet, mint, other } = await fixture()
    const owners = tokenAccountOwners(transaction)
    assert.deepEqual(owners.get(other), { wallet, mint })
    assert.deepEqual(readTransfers(transaction, owners), [
      { to: wallet, contract: null, amount: '1.5', position: 'ix:0' },
      { to: wallet, contract: mint, amount: '13.8', position: 'ix:1' },
      { to: wallet, contract: mint, amount: '5', position: 'ix:2' }, // `other` is the wallet's too
      // inner instructions are named by their parent (the fourth) and their own rank
      { to: wallet, contract: null, amount: '0.000000001', position: 'ix:3.0' },
      { to: wallet, contract: mint, amount: '0.00025', position: 'ix:3.1' },
    ])
    assert.isTrue(succeeded(transaction))
  })

  test('without token balances: a mint-less `transfer` is left out; the owner comes from the watched accounts', async ({
    assert,
  }) => {
    const { transaction, wallet, mint, walletAccount } = await fixture()
    transaction.meta!.preTokenBalances = []
    transaction.meta!.postTokenBalances = []
    assert.deepEqual(readTransfers(transaction, tokenAccountOwners(transaction)), [
      { to: wallet, contract: null, amount: '1.5', position: 'ix:0' },
      { to: walletAccount, contract: mint, amount: '13.8', position: 'ix:1' }, // owner unknown: the token account itself
      { to: wallet, contract: null, amount: '0.000000001', position: 'ix:3.0' },
    ])
    const watched = new Map([
      [walletAccount as string, { wallet: wallet as string, mint: mint as string }],
    ])
    assert.deepEqual(readTransfers(transaction, tokenAccountOwners(transaction, watched))[1], {
      to: wallet,
      contract: mint,
      amount: '13.8',
      position: 'ix:1',
    })
  })

  test('the owner after the transaction wins; an account of a stranger stays itself; moving funds between own accounts is no transfer', async ({
    assert,
  }) => {
    const { transaction, mint, other } = await fixture()
    const stranger = await newAddress()
    // `other` handed to a stranger in the transaction: what it received is the stranger's
    transaction.meta!.postTokenBalances = transaction.meta!.postTokenBalances!.map((entry) =>
      Number(entry.accountIndex) === 3 ? { ...entry, owner: stranger } : entry
    )
    const owners = tokenAccountOwners(transaction)
    assert.deepEqual(owners.get(other), { wallet: stranger, mint })
    assert.deepEqual(readTransfers(transaction, owners)[2], {
      to: stranger,
      contract: mint,
      amount: '5',
      position: 'ix:2',
    })

    // the wallet moving tokens from its associated account to another of its accounts, and SOL to itself
    const own = await fixture()
    const instructions = own.transaction.transaction.message.instructions as any[]
    instructions[0].parsed.info.source = own.wallet
    instructions[2].parsed.info.source = own.walletAccount
    const transfers = readTransfers(own.transaction, tokenAccountOwners(own.transaction))
    assert.deepEqual(
      transfers.map((transfer) => transfer.position),
      ['ix:1', 'ix:3.0', 'ix:3.1'],
      'the self-transfers (ix:0, ix:2) are left out'
    )
  })

  test('Token-2022: the amount received is what pays (fee withheld); a transfer credited less than it says is unreadable', async ({
    assert,
  }) => {
    const payer = await newAddress()
    const wallet = await newAddress()
    const mint = await newAddress()
    const [walletAccount] = await findAssociatedTokenPda({
      owner: wallet,
      mint,
      tokenProgram: TOKEN_2022_PROGRAM_ADDRESS,
    })
    const [payerAccount] = await findAssociatedTokenPda({
      owner: payer,
      mint,
      tokenProgram: TOKEN_2022_PROGRAM_ADDRESS,
    })
    const held = (accountIndex: number, owner: string, amount: string) => ({
      ...balance(accountIndex, mint, owner, amount),
      programId: TOKEN_2022_PROGRAM_ADDRESS,
    })
    const transfer = (type: string, extra: Record<string, unknown>): JsonParsedTransaction => ({
      slot: 1n,
      blockTime: 1_700_000_000n,
      meta: {
        err: null,
        preTokenBalances: [held(1, wallet, '0'), held(2, payer, '5000000')],
        postTokenBalances: [held(1, wallet, '990000'), held(2, payer, '4000000')],
        innerInstructions: [],
      },
      transaction: {
        signatures: ['sig'],
        message: {
          accountKeys: [payer, walletAccount, payerAccount, mint, TOKEN_2022_PROGRAM_ADDRESS].map(
            (pubkey) => ({ pubkey })
          ),
          instructions: [
            {
              program: 'spl-token-2022',
              programId: TOKEN_2022_PROGRAM_ADDRESS,
              parsed: {
                type,
                info: {
                  source: payerAccount,
                  mint,
                  destination: walletAccount,
                  authority: payer,
                  tokenAmount: { amount: '1000000', decimals: 6 },
                  ...extra,
                },
              },
            },
          ],
        },
      },
    })
    const withFee = transfer('transferCheckedWithFee', {
      feeAmount: { amount: '10000', decimals: 6 },
    })
    assert.deepEqual(readTransfers(withFee, tokenAccountOwners(withFee)), [
      { to: wallet, contract: mint, amount: '0.99', position: 'ix:0' },
    ])
    const plain = transfer('transferChecked', {})
    const owners = tokenAccountOwners(plain)
    assert.throws(
      () => readTransfers(plain, owners),
      UnreadableTransactionError,
      /received 990000 base units, its transfers say 1000000/
    )
  })

  test('a failed transaction or one without meta did not succeed', async ({ assert }) => {
    const { transaction } = await fixture()
    assert.isFalse(
      succeeded({
        ...transaction,
        meta: { ...transaction.meta!, err: { InstructionError: [0n, { Custom: 1n }] } },
      })
    )
    assert.isFalse(succeeded({ ...transaction, meta: null }))
  })

  test('commitment rule: 32+ is finalized, less is confirmed; confirmations follow the level', ({
    assert,
  }) => {
    assert.equal(commitmentFor(32), 'finalized')
    assert.equal(commitmentFor(64), 'finalized')
    assert.equal(commitmentFor(31), 'confirmed')
    assert.equal(commitmentFor(1), 'confirmed')
    assert.equal(commitmentFor(0), 'confirmed')
    assert.equal(confirmationsAt('finalized', 32), 32)
    assert.equal(confirmationsAt('finalized', 40), 40)
    assert.equal(confirmationsAt('finalized', 1), 32)
    assert.equal(confirmationsAt('confirmed', 32), 1)
    assert.equal(confirmationsAt('confirmed', 1), 1)
    assert.equal(confirmationsAt('confirmed', 0), 1)
    assert.equal(confirmationsAt('confirmed', 10), 10)
  })

  test('references: a base58 signature of 64 bytes, checked before any RPC call', async ({
    assert,
  }) => {
    const family = new SolanaFamily()
    const context = {
      chain: { network: 'solana', confirmations: 32 } as Chain,
      tokens: [] as Token[],
      order: {} as Order,
      rpc: new RpcPool([], { cooldownMs: 1, timeoutMs: 1000 }), // any RPC call fails with RpcUnavailableError
    }
    const base58 = getBase58Decoder()
    for (const bad of [
      '0xabc',
      '',
      'not base58 0OIl',
      base58.decode(randomBytes(32)),
      base58.decode(randomBytes(65)),
    ]) {
      await assert.rejects(() => family.verifyReference(bad, context), TransferLookupError)
    }
    await assert.rejects(
      () => family.verifyReference(base58.decode(randomBytes(64)), context),
      RpcUnavailableError
    )
  })

  test('addresses: base58 public keys only, kept as written', async ({ assert }) => {
    const family = new SolanaFamily()
    const wallet = await newAddress()
    assert.equal(family.normalizeAddress(` ${wallet} `), wallet)
    assert.throws(
      () => family.normalizeAddress('0x0000000000000000000000000000000000000000'),
      InvalidAddressError
    )
    assert.throws(() => family.normalizeContract(wallet.slice(0, -2)), InvalidAddressError)
  })

  test('Solana Pay URI: amount in token units, spl-token for a mint', async ({ assert }) => {
    const wallet = await newAddress()
    const mint = await newAddress()
    const order = { receiveAddress: wallet, actualAmount: '13.80' } as unknown as Order
    const chain = {} as Chain
    const usdt = { contract: mint } as unknown as Token
    const sol = { contract: null } as unknown as Token
    assert.equal(
      solanaPayUri({ chain, order, token: usdt }),
      `solana:${wallet}?amount=13.8&spl-token=${mint}`
    )
    assert.equal(
      solanaPayUri({
        chain,
        order: { ...order, actualAmount: '0.000001' } as unknown as Order,
        token: sol,
      }),
      `solana:${wallet}?amount=0.000001`
    )
  })
})
