import type { PluginIntegrationSection } from '#plugin_host/gateway_plugin'

/**
 * The compat (EPay) base URL's path: EPay SDKs and shop plugins take the
 * base URL with its trailing slash and append submit.php, mapi.php and
 * api.php to it.
 */
export const COMPAT_BASE_PATH = '/payments/compat/v1/order/create-transaction/'
export const COMPAT_SUBMIT_PATH = `${COMPAT_BASE_PATH}submit.php`

/** One EPay endpoint under the base URL: what it is called with and what it answers. */
export type CompatEndpoint = { call: string; method: string; purpose: string; answers: string }

/** The EPay endpoints (the SDK appends each `call` to the base URL). */
export const COMPAT_ENDPOINTS: CompatEndpoint[] = [
  {
    call: 'submit.php',
    method: 'GET or POST',
    purpose: 'Page jump: the payer is sent here with the signed order fields',
    answers: 'HTTP 302 to the cashier page (a refusal: JSON with status_code)',
  },
  {
    call: 'mapi.php',
    method: 'POST',
    purpose: 'API mode: the shop creates the order and shows the payment itself',
    answers:
      'JSON: code 1, trade_no, payurl (the cashier page) and, once token and network are known, qrcode (the wallet URI to show as a QR code); a refusal: code -1 and msg',
  },
  {
    call: 'api.php?act=order',
    method: 'GET or POST',
    purpose: 'Order query by trade_no or out_trade_no, with pid and key (the secret)',
    answers:
      'JSON: code 1, trade_no, out_trade_no, type, pid, name, money, status (1 paid, 0 not), addtime, endtime, api_trade_no (the paying transaction); a refusal: code -1 and msg',
  },
  {
    call: 'api.php?act=orders',
    method: 'GET or POST',
    purpose: 'The latest orders, limit (up to 50, default 20) per page',
    answers: 'JSON: code 1 and data, the orders with the fields of act=order',
  },
  {
    call: 'api.php?act=refund',
    method: 'POST',
    purpose: 'Refund',
    answers:
      'Always code -1: refunds are not supported (the gateway holds no private keys); refund from your own wallet',
  },
]
/** Keys of lang/<locale>/admin.json's guide: each endpoint's purpose and answer, by its call. */
const CALL_KEYS: Record<string, string> = {
  'submit.php': 'submit',
  'mapi.php': 'mapi',
  'api.php?act=order': 'order',
  'api.php?act=orders': 'orders',
  'api.php?act=refund': 'refund',
}

/**
 * The compat plugin's part of each API key's integration page: the EPay
 * base URL in the guide's endpoint table, and a card with the base URL,
 * the merchant ID and key, the signature and the EPay endpoints (its view
 * console/integration.edge), in the admin's language when given.
 */
export const compatIntegration: PluginIntegrationSection = {
  id: 'compat',
  view: 'compat::admin/integration',
  endpoints({ baseUrl, i18n }) {
    return [
      {
        name: i18n
          ? i18n.t('plugins.compat.admin.guide.endpoint')
          : 'EPay base URL (compat): the API URL of an EPay shop plugin',
        method: '+ submit.php, mapi.php, api.php',
        url: `${baseUrl}${COMPAT_BASE_PATH}`,
        signed: i18n
          ? i18n.t('plugins.compat.admin.guide.signed')
          : 'MD5 in the sign field; api.php: the secret as key',
      },
    ]
  },
  data({ baseUrl, pid, i18n }) {
    const t = (key: string) => i18n!.t(`plugins.compat.admin.guide.${key}`)
    return {
      baseUrl: `${baseUrl}${COMPAT_BASE_PATH}`,
      submitUrl: `${baseUrl}${COMPAT_SUBMIT_PATH}`,
      pidIsNumeric: /^\d+$/.test(pid),
      endpoints: COMPAT_ENDPOINTS.map((endpoint) => {
        const key = CALL_KEYS[endpoint.call]
        if (!i18n || !key) return endpoint
        return {
          ...endpoint,
          method: endpoint.method === 'GET or POST' ? t('get_or_post') : endpoint.method,
          purpose: t(`${key}_purpose`),
          answers: t(`${key}_answers`),
        }
      }),
    }
  },
}
