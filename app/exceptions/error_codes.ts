/**
 * Business codes of the interface spec, with their default messages.
 * HTTP status: 401 for signature errors, 400 for everything else.
 */
export const ErrorCode = {
  PARAMETER: 400,
  SIGNATURE: 401,
  WALLET_EXISTS: 10001,
  ORDER_EXISTS: 10002,
  NO_WALLET: 10003,
  INVALID_AMOUNT: 10004,
  NO_AMOUNT_CHANNEL: 10005,
  RATE_ERROR: 10006,
  BLOCK_PROCESSED: 10007,
  ORDER_NOT_FOUND: 10008,
  UNPARSABLE: 10009,
  STATUS_CHANGED: 10010,
  CHILD_LIMIT: 10011,
  CHILD_SWITCH: 10012,
  NOT_WAITING: 10013,
  CHAIN_DISABLED: 10014,
  ASSET_NOT_FOUND: 10016,
  PROVIDER_DISABLED: 10017,
  PROVIDER_INCOMPLETE: 10018,
  PROVIDER_UNSUPPORTED: 10019,
} as const

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode]

export const DEFAULT_MESSAGES: Record<ErrorCodeValue, string> = {
  400: 'Parameter error',
  401: 'Signature authentication error',
  10001: 'Wallet address already exists',
  10002: 'Payment transaction already exists; do not create repeatedly',
  10003: 'No available wallet address; payment cannot start',
  10004: 'Invalid payment amount; minimum payment unit cannot be met',
  10005: 'No available amount channel',
  10006: 'Exchange-rate calculation error',
  10007: 'Order block already processed',
  10008: 'Order does not exist',
  10009: 'Parameters cannot be parsed',
  10010: 'Order status has changed',
  10011: 'Child order count limit exceeded',
  10012: 'Cannot switch network for a child order',
  10013: 'Order is not waiting for payment',
  10014: 'Chain is not enabled',
  10016: 'Supported asset does not exist',
  10017: 'Payment provider is not enabled',
  10018: 'Payment provider configuration is incomplete',
  10019: 'Payment provider does not support this token or network',
}
