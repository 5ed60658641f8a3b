import { TOKEN_2022_PROGRAM_ADDRESS, TOKEN_PROGRAM_NAMES } from '#plugins/solana/solana_programs'
import { fromBaseUnits } from '#support/text/money'

/** Lamports per SOL: the native coin has 9 decimals. */
export const SOL_DECIMALS = 9

/**
 * The part of a `getTransaction` answer (encoding `jsonParsed`) this plugin
 * reads. Numbers may arrive as bigint (@solana/kit upcasts integers) or as
 * number; amounts of tokens arrive as strings.
 */
export type ParsedInstruction = {
  program?: string
  programId?: string
  parsed?: { type?: string; info?: Record<string, unknown> } | string
}

export type TokenBalance = {
  accountIndex: number | bigint
  mint: string
  owner?: string
  programId?: string
  uiTokenAmount: { amount: string; decimals: number | bigint }
}

export type JsonParsedTransaction = {
  slot: bigint | number
  blockTime: bigint | number | null
  meta: {
    err: unknown
    preTokenBalances?: readonly TokenBalance[] | null
    postTokenBalances?: readonly TokenBalance[] | null
    innerInstructions?:
      readonly { index: number | bigint; instructions: readonly ParsedInstruction[] }[] | null
  } | null
  transaction: {
    signatures: readonly string[]
    message: {
      accountKeys: readonly ({ pubkey: string } | string)[]
      instructions: readonly ParsedInstruction[]
    }
  }
}

/** A transfer read from a transaction, before the reference/time/depth are added. */
export type ChainTransfer = {
  /** The receiving wallet (for a token: the owner of the receiving token account). */
  to: string
  /** The mint; null for SOL. */
  contract: string | null
  /** Amount in token units, exact decimal string. */
  amount: string
  /** The instruction that made it: `ix:<n>` top-level, `ix:<n>.<m>` the m-th inner instruction of the n-th. */
  position: string
}

/**
 * Token accounts whose owner is known: account → owning wallet and mint.
 * A token transfer names only the receiving token account; the payment is
 * to the wallet that owns that account (its associated token account, or
 * any other token account of the mint it owns).
 */
export type TokenAccountOwners = Map<string, { wallet: string; mint: string }>

/** A transaction whose transfers cannot be read with confidence: the reason is kept with it (unmatched). */
export class UnreadableTransactionError extends Error {}

function accountAddress(key: { pubkey: string } | string): string {
  return typeof key === 'string' ? key : key.pubkey
}

/**
 * Top-level instructions, then the inner ones (CPIs: a program paying on
 * someone's behalf), each with its position in the transaction.
 */
export function allInstructions(
  transaction: JsonParsedTransaction
): { instruction: ParsedInstruction; position: string }[] {
  const top = transaction.transaction.message.instructions.map((instruction, index) => ({
    instruction,
    position: `ix:${index}`,
  }))
  const inner = (transaction.meta?.innerInstructions ?? []).flatMap((entry) =>
    entry.instructions.map((instruction, index) => ({
      instruction,
      position: `ix:${Number(entry.index)}.${index}`,
    }))
  )
  return [...top, ...inner]
}

function tokenBalances(transaction: JsonParsedTransaction): TokenBalance[] {
  // post first: a token account created by the transaction exists only after it
  return [
    ...(transaction.meta?.postTokenBalances ?? []),
    ...(transaction.meta?.preTokenBalances ?? []),
  ]
}

/**
 * The owner of every token account the transaction touched, from its
 * token balances (each names the account's owner and mint), so that a
 * lookup by reference needs no list of watched wallets. The balances after
 * the transaction win over those before (an account may change hands in
 * the transaction; what it holds afterwards is its new owner's), and both
 * over `known` (the scanner's watched accounts, used for accounts the
 * balances do not name).
 */
export function tokenAccountOwners(
  transaction: JsonParsedTransaction,
  known: TokenAccountOwners = new Map()
): TokenAccountOwners {
  const owners: TokenAccountOwners = new Map(known)
  const keys = transaction.transaction.message.accountKeys
  const before = transaction.meta?.preTokenBalances ?? []
  const after = transaction.meta?.postTokenBalances ?? []
  for (const balance of [...before, ...after]) {
    const account = keys[Number(balance.accountIndex)]
    if (!account || !balance.owner) continue
    owners.set(accountAddress(account), { wallet: balance.owner, mint: balance.mint })
  }
  return owners
}

/**
 * Every SOL and SPL token transfer the transaction makes, top-level and
 * inner instructions alike, in instruction order:
 * - `system` `transfer` / `transferWithSeed`: to the destination, SOL;
 * - `spl-token` `transferChecked`: the mint is in the instruction;
 * - `spl-token` `transfer`: no mint in the instruction, it is read from the
 *   token balance of the destination account.
 * A token transfer to a token account whose owner is known is reported to
 * that owner (the wallet); to an account of unknown owner, to that account
 * itself (which is no wallet, so it pays nothing). A transfer between two
 * accounts of the same owner (a wallet moving its own funds, SOL to itself)
 * brought nothing in: it is left out.
 */
export function readTransfers(
  transaction: JsonParsedTransaction,
  owners: TokenAccountOwners
): ChainTransfer[] {
  const keys = transaction.transaction.message.accountKeys.map(accountAddress)
  const balances = tokenBalances(transaction)
  const balanceOf = (account: string) =>
    balances.find((entry) => keys[Number(entry.accountIndex)] === account)

  const transfers: ChainTransfer[] = []
  /** Base units each Token-2022 account is said to receive, checked against its balance below. */
  const credited2022 = new Map<string, bigint>()
  for (const { instruction, position } of allInstructions(transaction)) {
    if (typeof instruction.parsed !== 'object' || !instruction.parsed) continue
    const type = instruction.parsed.type
    const info = instruction.parsed.info ?? {}

    if (instruction.program === 'system' && (type === 'transfer' || type === 'transferWithSeed')) {
      const destination = String(info.destination ?? '')
      if (!destination || info.lamports === undefined) {
        throw new UnreadableTransactionError(`a system ${type} without destination or lamports`)
      }
      if (destination === String(info.source ?? '')) continue
      transfers.push({
        to: destination,
        contract: null,
        amount: fromBaseUnits(info.lamports as bigint, SOL_DECIMALS),
        position,
      })
      continue
    }

    if (!instruction.program || !TOKEN_PROGRAM_NAMES.has(instruction.program)) continue
    if (type !== 'transfer' && type !== 'transferChecked' && type !== 'transferCheckedWithFee')
      continue
    const destination = String(info.destination ?? '')
    if (!destination)
      throw new UnreadableTransactionError(`a ${instruction.program} ${type} without destination`)
    let mint: string
    let decimals: number
    let baseUnits: bigint
    if (type === 'transfer') {
      const balance = balanceOf(destination)
      if (!balance) continue // no balance entry: not a token account the node could read (not ours either)
      if (info.amount === undefined)
        throw new UnreadableTransactionError(`a ${instruction.program} transfer without amount`)
      mint = balance.mint
      decimals = Number(balance.uiTokenAmount.decimals)
      baseUnits = BigInt(String(info.amount))
    } else {
      const tokenAmount = info.tokenAmount as
        { amount?: string; decimals?: number | bigint } | undefined
      if (!tokenAmount?.amount || tokenAmount.decimals === undefined || !info.mint) {
        throw new UnreadableTransactionError(
          `a ${instruction.program} ${type} without mint or token amount`
        )
      }
      mint = String(info.mint)
      decimals = Number(tokenAmount.decimals)
      baseUnits = BigInt(String(tokenAmount.amount))
      if (type === 'transferCheckedWithFee') {
        // the fee is withheld in the destination account: the recipient gets the rest
        const fee = info.feeAmount as { amount?: string } | undefined
        if (!fee?.amount)
          throw new UnreadableTransactionError('a transferCheckedWithFee without feeAmount')
        baseUnits -= BigInt(String(fee.amount))
      }
    }
    if (instruction.program === 'spl-token-2022') {
      credited2022.set(destination, (credited2022.get(destination) ?? 0n) + baseUnits)
    }
    const owner = owners.get(destination)
    const to = owner && owner.mint === mint ? owner.wallet : destination
    if (owner && owners.get(String(info.source ?? ''))?.wallet === owner.wallet) continue
    transfers.push({ to, contract: mint, amount: fromBaseUnits(baseUnits, decimals), position })
  }
  checkToken2022Credits(transaction, keys, credited2022)
  return transfers
}

/**
 * A Token-2022 mint may withhold a transfer fee even on a plain
 * transferChecked (the instruction then shows the amount sent, not the
 * amount received). An account credited less than its instructions say
 * is not read as paid: the transaction is reported unreadable instead of
 * crediting more than arrived.
 */
function checkToken2022Credits(
  transaction: JsonParsedTransaction,
  keys: string[],
  credited: Map<string, bigint>
) {
  for (const [account, amount] of credited) {
    const index = keys.indexOf(account)
    const amountIn = (list: readonly TokenBalance[] | null | undefined) => {
      const entry = (list ?? []).find((balance) => Number(balance.accountIndex) === index)
      return entry && entry.programId === TOKEN_2022_PROGRAM_ADDRESS
        ? BigInt(entry.uiTokenAmount.amount)
        : null
    }
    const after = amountIn(transaction.meta?.postTokenBalances)
    if (after === null) continue
    const received = after - (amountIn(transaction.meta?.preTokenBalances) ?? 0n)
    if (received < amount) {
      throw new UnreadableTransactionError(
        `Token-2022 account ${account} received ${received} base units, its transfers say ${amount} (a transfer fee withheld?)`
      )
    }
  }
}

/** Milliseconds of the block time; null when the node does not know it. */
export function blockTimeMs(transaction: { blockTime: bigint | number | null }): number | null {
  return transaction.blockTime === null || transaction.blockTime === undefined
    ? null
    : Number(transaction.blockTime) * 1000
}

/** A failed transaction moved nothing (but still shows its instructions). */
export function succeeded(transaction: JsonParsedTransaction): boolean {
  return (
    transaction.meta !== null && transaction.meta !== undefined && transaction.meta.err === null
  )
}
