import { utils } from 'tronweb'

/**
 * Real TRON transactions built and signed offline with tronweb: the same
 * protobuf raw data, transaction id (sha256 of it) and secp256k1 signature
 * a wallet broadcasts. No node is involved; the fake TronGrid serves them.
 */
export type TronAccount = { privateKey: string; address: string; hex: string }

export function newTronAccount(): TronAccount {
  const account = utils.accounts.generateAccount()
  return {
    privateKey: account.privateKey,
    address: account.address.base58,
    hex: account.address.hex.toLowerCase(),
  }
}

/** 41-prefixed lower-case hex of a base58 address (node JSON form). */
export function hexOf(address: string): string {
  return utils.address.toHex(address).toLowerCase()
}

/** A transaction as a wallet signs it (raw data, id, signature), before any block. */
export type SignedTronTransaction = {
  visible: false
  txID: string
  raw_data: {
    contract: { parameter: { value: Record<string, unknown>; type_url: string }; type: string }[]
    ref_block_bytes: string
    ref_block_hash: string
    expiration: number
    timestamp: number
    fee_limit?: number
  }
  raw_data_hex: string
  signature: string[]
}

/** The reference block a wallet puts into a transaction (TAPOS). */
export type RefBlock = { number: number; blockId: string }

function sign(
  from: TronAccount,
  type: string,
  value: Record<string, unknown>,
  ref: RefBlock,
  extra: Record<string, unknown> = {}
): SignedTronTransaction {
  const now = Date.now()
  const transaction: any = {
    visible: false,
    raw_data: {
      contract: [{ parameter: { value, type_url: `type.googleapis.com/protocol.${type}` }, type }],
      ref_block_bytes: (ref.number & 0xffff).toString(16).padStart(4, '0'),
      ref_block_hash: ref.blockId.slice(16, 32),
      expiration: now + 60_000,
      timestamp: now,
      ...extra,
    },
  }
  const message = utils.transaction.txJsonToPb(transaction)
  transaction.txID = utils.transaction.txPbToTxID(message).replace(/^0x/, '')
  transaction.raw_data_hex = utils.transaction.txPbToRawDataHex(message).toLowerCase()
  return utils.crypto.signTransaction(
    from.privateKey,
    transaction
  ) as unknown as SignedTronTransaction
}

/** A TRX transfer (TransferContract), amount in sun. */
export function signedTrxTransfer(from: TronAccount, to: string, sun: bigint, ref: RefBlock) {
  return sign(
    from,
    'TransferContract',
    { amount: Number(sun), owner_address: from.hex, to_address: hexOf(to) },
    ref
  )
}

/** ABI call data of transfer(address,uint256). */
export function transferCallData(to: string, amount: bigint): string {
  return 'a9059cbb' + hexOf(to).slice(2).padStart(64, '0') + amount.toString(16).padStart(64, '0')
}

/** A TRC-20 transfer(to, amount) call (TriggerSmartContract) on `contract`. */
export function signedTrc20Transfer(
  from: TronAccount,
  contract: string,
  to: string,
  amount: bigint,
  ref: RefBlock
) {
  return sign(
    from,
    'TriggerSmartContract',
    {
      data: transferCallData(to, amount),
      owner_address: from.hex,
      contract_address: hexOf(contract),
    },
    ref,
    { fee_limit: 100_000_000 }
  )
}

/**
 * Any other contract call (TriggerSmartContract): an exchange's batch
 * payout, a contract forwarding TRX. What it does on chain is the fake
 * node's business; this is only the signed call.
 */
export function signedContractCall(
  from: TronAccount,
  contract: string,
  data: string,
  ref: RefBlock
) {
  return sign(
    from,
    'TriggerSmartContract',
    { data, owner_address: from.hex, contract_address: hexOf(contract) },
    ref,
    {
      fee_limit: 150_000_000,
    }
  )
}
