/**
 * Solana has no per-block confirmation count worth trusting; it has two
 * levels a payment can wait for:
 * - `confirmed`: a supermajority of stake voted for the block (optimistic
 *   confirmation, seconds);
 * - `finalized`: the block is rooted, 31+ blocks have been built on it.
 *
 * A chain's `confirmations` setting picks the level: 32 or more asks for
 * `finalized`, anything less for `confirmed` (never `processed`). Reported
 * confirmations follow the same scale, so the core's comparison agrees with
 * the level: a finalized transfer reports max(32, required); a confirmed
 * one reports the requirement itself when that is below 32 (it meets it),
 * and 1 when finalization is required (it does not).
 */
export const FINALIZED_CONFIRMATIONS = 32

export type SolanaCommitment = 'confirmed' | 'finalized'

export function commitmentFor(required: number): SolanaCommitment {
  return required >= FINALIZED_CONFIRMATIONS ? 'finalized' : 'confirmed'
}

export function confirmationsAt(status: SolanaCommitment, required: number): number {
  if (status === 'finalized') return Math.max(FINALIZED_CONFIRMATIONS, required)
  return required < FINALIZED_CONFIRMATIONS ? Math.max(1, required) : 1
}
