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
  money: vine
    .string()
    .use(fiatAmountRule({ min: '0.01', max: '10000000000', maxFractionDigits: 4 })),
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

/** Which order api.php?act=order asks for: our trade_no, else the shop's out_trade_no. */
export const compatOrderQueryValidator = vine.create({
  trade_no: vine.string().maxLength(64).optional().requiredIfMissing('out_trade_no'),
  out_trade_no: vine.string().maxLength(32).optional(),
})

compatOrderQueryValidator.messagesProvider = new SimpleMessagesProvider({
  'trade_no.requiredIfMissing': 'The trade_no or out_trade_no field is required',
  'trade_no.required': 'The trade_no or out_trade_no field is required',
  'trade_no.maxLength': 'The trade_no field must be at most 64 characters',
  'out_trade_no.maxLength': 'The out_trade_no field must be at most 32 characters',
})

/** A page of api.php?act=orders: `limit` orders (at most 50, as EPay), page `page` from 1. */
export const compatOrderListValidator = vine.create({
  limit: vine.number().withoutDecimals().range([1, 50]).optional(),
  page: vine.number().withoutDecimals().range([1, 100_000]).optional(),
})

compatOrderListValidator.messagesProvider = new SimpleMessagesProvider({
  'limit.number': 'The limit field must be a whole number from 1 to 50',
  'limit.withoutDecimals': 'The limit field must be a whole number from 1 to 50',
  'limit.range': 'The limit field must be a whole number from 1 to 50',
  'page.number': 'The page field must be a whole number from 1',
  'page.withoutDecimals': 'The page field must be a whole number from 1',
  'page.range': 'The page field must be a whole number from 1 to 100000',
})
