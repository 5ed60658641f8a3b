import type { ParameterObject, PathItemObject, SchemaObject } from '#openapi/openapi_types'
import type { PluginOpenApi } from '#plugin_host/gateway_plugin'
import { closedObject } from '#openapi/schemas'
import { CALLBACK_RETRIES, callbackAcknowledged } from '#openapi/webhooks'

/**
 * The compat flavour's part of the merchant API's OpenAPI document: its
 * GET callback (payment_type Compat) and the `compat` section of the
 * public config endpoint.
 */

const query = (name: string, description: string, schema: SchemaObject): ParameterObject => ({
  name,
  in: 'query',
  required: true,
  description,
  schema,
})

export const compatCallbackParameters: ParameterObject[] = [
  query('pid', 'The merchant’s PID, numeric', { type: 'string', pattern: '^[0-9]+$' }),
  query('trade_no', 'Transaction number (trade_id)', {
    type: 'string',
    pattern: '^[A-Za-z0-9]{22}$',
  }),
  query('out_trade_no', 'Merchant order number', { type: 'string', maxLength: 32 }),
  query('type', 'Payment type the order was created with (`alipay` when none)', { type: 'string' }),
  query('name', 'Product name (may be empty)', { type: 'string' }),
  query('money', 'Fiat amount with four decimals', {
    type: 'string',
    pattern: '^[0-9]+\\.[0-9]{4}$',
  }),
  query('trade_status', 'Always TRADE_SUCCESS', { const: 'TRADE_SUCCESS' }),
  query(
    'sign',
    'MD5 (lower-case hex) of the sorted name=value pairs of the other non-empty parameters but sign_type, joined by &, with the secret_key appended',
    {
      type: 'string',
      pattern: '^[0-9a-f]{32}$',
    }
  ),
  query('sign_type', 'Always MD5', { const: 'MD5' }),
]

const compatPaymentCallback: PathItemObject = {
  get: {
    operationId: 'compatPaymentCallback',
    tags: ['Callbacks'],
    summary:
      'Payment success, compat orders (payment_type Compat): GET notify_url with query parameters',
    description: `${CALLBACK_RETRIES} The parameters are added to notify_url’s own query, if it has one.`,
    parameters: compatCallbackParameters,
    responses: callbackAcknowledged,
  },
}

/** The `compat` section of the public config endpoint. */
export const compatConfigSchema: SchemaObject = closedObject(
  {
    default_token: { type: 'string' },
    default_currency: { type: 'string' },
    default_network: { type: 'string' },
  },
  'Compat flavour defaults (empty strings when unset)'
)

export const compatOpenApi: PluginOpenApi = {
  description:
    'The compat flavour (EPay-style, MD5, `/payments/compat/v1`) is described in the README; its callback is described here among the webhooks.',
  webhooks: { compatPaymentCallback },
}
