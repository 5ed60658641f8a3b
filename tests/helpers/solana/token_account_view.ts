import { isSome } from '@solana/kit'
import { AccountState, getTokenDecoder, getTokenSize } from '@solana-program/token'
import { Decimal } from '#support/text/money'
import { TOKEN_2022_PROGRAM_ADDRESS } from '#plugins/solana/solana_programs'
import type { TokenAccountState } from '#tests/helpers/solana/solana_test_chain'

/** The account type byte Token-2022 writes right after the base layout of an account with extensions. */
const ACCOUNT_TYPE_ACCOUNT = 2
/** Token-2022 extension types a payment's accounts carry, by their number, as jsonParsed names them. */
const EXTENSION_NAMES: Record<number, string> = {
  2: 'transferFeeAmount',
  7: 'immutableOwner',
  8: 'memoTransfer',
  11: 'cpiGuard',
}

function uiAmount(amount: bigint, decimals: number) {
  const uiAmountString = new Decimal(amount.toString()).shiftedBy(-decimals).toFixed()
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString }
}

/** The TLV extensions after a Token-2022 account's base layout and type byte. */
function extensions(data: Uint8Array): { extension: string; state?: Record<string, unknown> }[] {
  const found: { extension: string; state?: Record<string, unknown> }[] = []
  if (data.length <= getTokenSize() + 1 || data[getTokenSize()] !== ACCOUNT_TYPE_ACCOUNT)
    return found
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  for (let offset = getTokenSize() + 1; offset + 4 <= data.length;) {
    const type = view.getUint16(offset, true)
    const length = view.getUint16(offset + 2, true)
    if (type === 0) break // uninitialised padding
    const name = EXTENSION_NAMES[type] ?? 'unparseableExtension'
    if (type === 2)
      found.push({
        extension: name,
        state: { withheldAmount: Number(view.getBigUint64(offset + 4, true)) },
      })
    else found.push({ extension: name })
    offset += 4 + length
  }
  return found
}

/**
 * A token account as `getTokenAccountsByOwner` / `getAccountInfo` answer
 * it with encoding jsonParsed: `{pubkey, account: {data: {program,
 * parsed: {info, type: 'account'}, space}, executable, lamports, owner,
 * rentEpoch, space}}`, `program` being `spl-token` or `spl-token-2022`,
 * `info` the owner, mint, state and `tokenAmount` (plus the delegate,
 * close authority and Token-2022 extensions when set).
 */
export function jsonParsedTokenAccount(state: TokenAccountState) {
  const info: Record<string, unknown> = {
    isNative: false,
    mint: state.mint,
    owner: state.owner,
    state: 'initialized',
  }
  info.tokenAmount = uiAmount(state.amount, state.decimals)
  if (state.data) {
    const token = getTokenDecoder().decode(state.data.slice(0, getTokenSize()))
    if (token.state === AccountState.Frozen) info.state = 'frozen'
    if (isSome(token.delegate)) {
      info.delegate = token.delegate.value
      info.delegatedAmount = uiAmount(token.delegatedAmount, state.decimals)
    }
    if (isSome(token.closeAuthority)) info.closeAuthority = token.closeAuthority.value
    const list = state.programId === TOKEN_2022_PROGRAM_ADDRESS ? extensions(state.data) : []
    if (list.length > 0) info.extensions = list
  }
  const space = state.data?.length ?? getTokenSize()
  return {
    pubkey: state.pubkey,
    account: {
      data: {
        program: state.programId === TOKEN_2022_PROGRAM_ADDRESS ? 'spl-token-2022' : 'spl-token',
        parsed: { info, type: 'account' },
        space,
      },
      executable: false,
      lamports: Number(state.lamports),
      owner: state.programId,
      rentEpoch: 18446744073709551615,
      space,
    },
  }
}
