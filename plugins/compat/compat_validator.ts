import vine, { SimpleMessagesProvider } from '@vinejs/vine'
import { fiatAmountRule, httpUrl } from '#validators/rules'

/** Field rules of the compat submit.php (after the MD5 signature passed). */
export const compatOrderValidator = vine.create({
  pid: vine.string().maxLength(32),
  money: vine.string().use(fiatAmountRule({ min: '0.01', max: '10000000000', maxFractionDigits: 4 })),
  out_trade_no: vine
    .string()
    .minLength(1)
    .maxLength(32)
    .regex(/^[^\u0000-\u001f\u007f]+$/),
  notify_url: httpUrl(),
  return_url: httpUrl().optional(),
  name: vine.string().maxLength(255).optional(),
  type: vine.string().trim().maxLength(64).optional(),
  token: vine
    .string()
    .trim()
    .regex(/^[A-Za-z0-9]{1,16}$/)
    .toUpperCase()
    .optional(),
  network: vine
    .string()
    .trim()
    .regex(/^[A-Za-z0-9-]{1,32}$/)
    .toLowerCase()
    .optional(),
  currency: vine
    .string()
    .trim()
    .regex(/^[A-Za-z]{3,10}$/)
    .toUpperCase()
    .optional(),
  sign: vine.string(),
})

compatOrderValidator.messagesProvider = new SimpleMessagesProvider({
  'required': 'The {{ field }} field is required',
  'out_trade_no.maxLength': 'The out_trade_no field must be at most 32 characters',
  'notify_url.url': 'The notify_url field must be an http(s) URL',
  'return_url.url': 'The return_url field must be an http(s) URL',
  'currency.regex': 'The currency field must be a fiat code such as CNY or USD',
  'token.regex': 'The token field must be a token symbol such as USDT',
  'network.regex': 'The network field must be a network name such as tron',
})
