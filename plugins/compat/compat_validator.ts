import vine, { SimpleMessagesProvider } from '@vinejs/vine'
import {
  ORDER_FIELD_MESSAGES,
  currencyField,
  fiatAmountRule,
  httpUrl,
  merchantOrderIdField,
  networkField,
  tokenField,
} from '#validators/rules'

/** Field rules of the compat submit.php (after the MD5 signature passed). */
export const compatOrderValidator = vine.create({
  pid: vine.string().maxLength(32),
  money: vine.string().use(fiatAmountRule({ min: '0.01', max: '10000000000', maxFractionDigits: 4 })),
  out_trade_no: merchantOrderIdField(),
  notify_url: httpUrl(),
  return_url: httpUrl().optional(),
  name: vine.string().maxLength(255).optional(),
  type: vine.string().trim().maxLength(64).optional(),
  token: tokenField().optional(),
  network: networkField().optional(),
  currency: currencyField().optional(),
  sign: vine.string(),
})

compatOrderValidator.messagesProvider = new SimpleMessagesProvider({
  ...ORDER_FIELD_MESSAGES,
  'out_trade_no.maxLength': 'The out_trade_no field must be at most 32 characters',
  'return_url.url': 'The return_url field must be an http(s) URL',
})
