import vine from '@vinejs/vine'
import { networkField, tokenField } from '#validators/rules'

/**
 * Fields of POST /pay/switch-network: the parent's trade_id and the
 * target (a network name or `provider`, and a token), case normalised.
 */
export const switchNetworkValidator = vine.create({
  trade_id: vine.string().trim().maxLength(64),
  token: tokenField(),
  network: networkField(),
})
