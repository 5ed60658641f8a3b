import { OperatorError } from '#support/cli/operator_error'
import { looksSealed } from '#support/crypto/secret_box'

/**
 * Stored secrets are recognised as encrypted by their shape: a plain one an
 * operator gives must not have it, or it would be taken for ciphertext.
 */
export function refuseSealedLookalike(value: string) {
  if (looksSealed(value))
    throw new OperatorError('The value has the shape of an encrypted value; choose another', {
      key: 'sealed_lookalike',
    })
}
