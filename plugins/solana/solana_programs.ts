import { address, type Address } from '@solana/kit'
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token'

export { TOKEN_PROGRAM_ADDRESS }

/** The Token-2022 program (token extensions): same transfer instructions, its own associated accounts. */
export const TOKEN_2022_PROGRAM_ADDRESS = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb')

/** The token programs a mint may belong to, by id. */
export const TOKEN_PROGRAMS = new Set<string>([TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS])

/** Names the node's jsonParsed output gives the two token programs' instructions. */
export const TOKEN_PROGRAM_NAMES = new Set(['spl-token', 'spl-token-2022'])

/** Associated token accounts are derived once per process (pure hashing, but per run adds up). */
const associatedCache = new Map<string, Address>()

/** The associated token account of `wallet` for `mint` under the mint's token program. */
export async function associatedTokenAccount(
  wallet: string,
  mint: string,
  tokenProgram: string
): Promise<Address> {
  const key = `${wallet}:${mint}:${tokenProgram}`
  let found = associatedCache.get(key)
  if (!found) {
    ;[found] = await findAssociatedTokenPda({
      owner: address(wallet),
      mint: address(mint),
      tokenProgram: address(tokenProgram),
    })
    associatedCache.set(key, found)
  }
  return found
}
