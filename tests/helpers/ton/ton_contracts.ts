import { readFileSync } from 'node:fs'
import { compileFunc } from '@ton-community/func-js'
import { type Address, beginCell, Cell, type StateInit } from '@ton/core'

const SOURCES = new URL('./', import.meta.url)
const compiled = new Map<string, Cell>()

/** Compiles one of our FunC contracts (next to this file) with the WASM compiler. */
export async function contractCode(
  target: 'jetton_minter.fc' | 'jetton_wallet.fc' | 'rejecting_receiver.fc'
) {
  const known = compiled.get(target)
  if (known) return known
  const result = await compileFunc({
    targets: [target],
    sources: (path: string) => readFileSync(new URL(path, SOURCES), 'utf8'),
  })
  if (result.status === 'error')
    throw new Error(`FunC compilation of ${target} failed: ${result.message}`)
  const code = Cell.fromBase64(result.codeBoc)
  compiled.set(target, code)
  return code
}

export const OP = {
  transfer: 0x0f8a7ea5,
  transferNotification: 0x7362d09c,
  mint: 0x4d494e54,
} as const

/** Minter storage: total_supply admin content wallet_code (see jetton_minter.fc). */
export async function jettonMinterInit(admin: Address, name: string): Promise<StateInit> {
  const walletCode = await contractCode('jetton_wallet.fc')
  const content = beginCell().storeStringTail(name).endCell()
  const data = beginCell()
    .storeCoins(0)
    .storeAddress(admin)
    .storeRef(content)
    .storeRef(walletCode)
    .endCell()
  return { code: await contractCode('jetton_minter.fc'), data }
}

export function mintBody(owner: Address, amount: bigint, forwardTonAmount = 0n) {
  return beginCell()
    .storeUint(OP.mint, 32)
    .storeUint(0, 64)
    .storeAddress(owner)
    .storeCoins(amount)
    .storeCoins(forwardTonAmount)
    .endCell()
}

/** TEP-74 transfer, sent by the owner to its own jetton wallet. */
export function jettonTransferBody(options: {
  amount: bigint
  destination: Address
  response: Address | null
  forwardTonAmount: bigint
  comment?: string
  queryId?: bigint
}) {
  const body = beginCell()
    .storeUint(OP.transfer, 32)
    .storeUint(options.queryId ?? 7n, 64)
    .storeCoins(options.amount)
    .storeAddress(options.destination)
    .storeAddress(options.response)
    .storeBit(false) // no custom_payload
    .storeCoins(options.forwardTonAmount)
  if (options.comment === undefined) return body.storeBit(false).endCell()
  const payload = beginCell().storeUint(0, 32).storeStringTail(options.comment).endCell()
  return body.storeBit(true).storeRef(payload).endCell()
}

/** A transfer_notification body as a forger writes it (TEP-74 layout). */
export function notificationBody(amount: bigint, sender: Address) {
  return beginCell()
    .storeUint(OP.transferNotification, 32)
    .storeUint(1, 64)
    .storeCoins(amount)
    .storeAddress(sender)
    .storeBit(false)
    .endCell()
}
