import vine from '@vinejs/vine'

/**
 * Field of POST /pay/submit-tx-hash/:trade_id: the payer's transaction
 * reference, in any of the forms the order's family accepts (its shape is
 * the family's to judge, after the order's own rules).
 */
export const submitTxHashValidator = vine.create({
  block_transaction_id: vine.string().trim().minLength(8).maxLength(255),
})
