import {
  booleanSetting,
  enumSetting,
  integerSetting,
  stringSetting,
  urlSetting,
  SettingValueError,
  type SettingDefinition,
  timeZoneSetting,
  listSetting,
  upperListSetting,
} from '#settings/setting_types'
import {
  MAX_ALLOWLIST_ENTRIES,
  parseAllowListEntry,
  splitAllowList,
} from '#support/http/ip_allowlist'

const COLOR = /^#[0-9a-fA-F]{3,8}$|^[a-zA-Z]{1,20}$/

/** IPs and CIDR ranges (as API keys' allow-lists), stored comma-separated; empty: none. */
function ipListSetting(description: string): SettingDefinition<string> {
  return {
    type: 'string',
    default: '',
    description,
    maxLength: 4000,
    parse(raw) {
      const entries = splitAllowList(raw)
      if (entries.length > MAX_ALLOWLIST_ENTRIES) {
        throw new SettingValueError(
          `must list at most ${MAX_ALLOWLIST_ENTRIES} addresses or ranges`
        )
      }
      const invalid = entries.find((entry) => parseAllowListEntry(entry) === null)
      if (invalid !== undefined)
        throw new SettingValueError(`"${invalid}" is not an IP address or CIDR range`)
      return entries.join(',')
    },
    serialize: (value) => value,
  }
}

/**
 * Every setting of the core, with its default (plugins add theirs, see
 * app/plugin_host/gateway_plugin.ts). Settings live in the
 * `settings` table; a key that was never set has its default here.
 */
export const SETTINGS = {
  'order.expiration_minutes': integerSetting(10, 'Lifetime of a waiting order, in minutes', {
    min: 1,
    max: 1440,
  }),
  'order.amount_max_steps': integerSetting(
    100,
    'How many amount steps (10^-precision each) are tried to find a free unique amount',
    { min: 1, max: 10000 }
  ),

  'order.late_payment_margin_seconds': integerSetting(
    900,
    "How long an amount stays reserved on its address after its order expired or was closed, on top of the chain's confirmations × block time + scan interval, so that a late transfer can never pay another order",
    { min: 0, max: 604800 }
  ),

  'rate.sources': listSetting(
    [],
    'Live rate sources used, by name, in order (node ace rate:sources lists those the plugins bring); empty: none (fixed rates only, or rate.api_url)',
    { item: /^[a-z][a-z0-9_]*$/, itemHint: 'a source name' }
  ),
  'rate.min_sources': integerSetting(
    1,
    'Fresh, agreeing sources a pair needs; with fewer, orders in it are refused (10006)',
    { min: 1, max: 10 }
  ),
  'rate.max_deviation_percent': integerSetting(
    2,
    'A source further than this from the median of the others (percent) is dropped as an outlier',
    { min: 1, max: 50 }
  ),
  'rate.max_age_seconds': integerSetting(600, 'A source answer older than this is not used', {
    min: 30,
    max: 86_400,
  }),
  'rate.refresh_seconds': integerSetting(
    60,
    'How often the workers ask the live sources (never on order creation)',
    { min: 10, max: 3600 }
  ),
  'rate.currencies': upperListSetting(
    ['CNY', 'USD'],
    'Fiat currencies kept priced besides those of fixed rates and of the last 30 days of orders'
  ),
  'rate.api_url': urlSetting(
    '',
    'Live rate source: GET {url}/{fiat}.json → {fiat: {token: rate}} (empty: fixed rates only)'
  ),
  'rate.cache_ttl_seconds': integerSetting(
    60,
    'How long a live rate is used before it is fetched again; older rates are refused',
    {
      min: 5,
      max: 86400,
    }
  ),
  'rate.timeout_seconds': integerSetting(5, 'HTTP timeout of the live rate source', {
    min: 1,
    max: 60,
  }),

  'rate_limit.store': enumSetting(
    'memory',
    ['memory', 'database', 'redis'] as const,
    'Where request counts are kept: memory (per process), database or redis (shared by all processes)'
  ),
  'rate_limit.create_per_minute': integerSetting(
    60,
    'Order-creation requests per minute per API key (pid); failed signatures count per client IP (0: no limit)',
    { min: 0, max: 1_000_000 }
  ),
  'rate_limit.query_per_minute': integerSetting(
    600,
    'Order-query requests per minute per API key (pid), counted apart from creates; failed signatures count per client IP (0: no limit)',
    { min: 0, max: 1_000_000 }
  ),
  'rate_limit.cashier_per_minute': integerSetting(
    120,
    'Cashier requests per minute per IP (0: no limit)',
    {
      min: 0,
      max: 1_000_000,
    }
  ),
  'rate_limit.notify_per_minute': integerSetting(
    300,
    'Provider notifications per minute per IP (0: no limit)',
    {
      min: 0,
      max: 1_000_000,
    }
  ),
  'rate_limit.submit_per_order': integerSetting(
    5,
    'Transaction-hash submissions per order (trade_id) per window, whatever the client IP (0: no limit)',
    { min: 0, max: 1_000_000 }
  ),
  'rate_limit.submit_window_minutes': integerSetting(
    10,
    'Window of rate_limit.submit_per_order, in minutes',
    {
      min: 1,
      max: 1440,
    }
  ),

  // Merchant callbacks. The first two keys are named by the interface spec.
  'order_notice_max_retry': integerSetting(6, 'Callback retries after the first failed attempt', {
    min: 0,
    max: 50,
  }),
  'callback_retry_base_seconds': integerSetting(
    5,
    'Delay before retry n is base × 2^(n-1) seconds (with jitter), each capped at 300 s',
    { min: 1, max: 300 }
  ),
  'callbacks.timeout_seconds': integerSetting(10, 'HTTP timeout of one callback attempt', {
    min: 1,
    max: 60,
  }),
  'notify.time_zone': timeZoneSetting(
    'UTC',
    'Time zone of quiet hours and of the daily report (an IANA name: Europe/Berlin, Asia/Shanghai)'
  ),
  'notify.scanner_stalled_minutes': integerSetting(
    10,
    'Minutes without a scan of a chain that takes payments that raise scanner.stalled',
    { min: 2, max: 1440 }
  ),
  'notify.daily_report_hour': integerSetting(
    8,
    'Hour (0-23, in notify.time_zone) from which daily.report tells the day before',
    { min: 0, max: 23 }
  ),
  'notify.max_attempts': integerSetting(
    12,
    'Attempts of one notification before it is given up (10 s doubling to 15 min between them; a service’s own wait is honoured)',
    { min: 1, max: 100 }
  ),
  'notify.callback_failing_after': integerSetting(
    5,
    'Failed attempts of one merchant callback that raise callback.failing (once per callback)',
    { min: 1, max: 100 }
  ),
  'callbacks.allow_private_targets': booleanSetting(
    false,
    'Allow callbacks to loopback, private and link-local addresses (off: refused after DNS resolution)'
  ),
  'callbacks.concurrency': integerSetting(
    64,
    'Callbacks one worker process has in flight at once (the delivery loop claims more as each one ends)',
    { min: 1, max: 1000 }
  ),
  'callbacks.per_host_concurrency': integerSetting(
    16,
    'Callbacks in flight at once to one merchant origin (scheme, host, port), so that a slow or unreachable merchant holds at most this many of the slots',
    { min: 1, max: 1000 }
  ),

  // Chain watching.
  'chains.rpc_timeout_seconds': integerSetting(10, 'Timeout of one RPC request to a chain node', {
    min: 1,
    max: 120,
  }),
  'chains.rpc_cooldown_seconds': integerSetting(
    30,
    'How long a failing RPC endpoint is skipped in favour of the next',
    {
      min: 1,
      max: 3600,
    }
  ),
  'chains.rpc_requests_per_second': integerSetting(
    10,
    'Requests per second sent to one RPC endpoint when neither the chain (chain:set --requests-per-second) nor its family sets a budget',
    { min: 1, max: 100000 }
  ),
  'chains.rpc_requests_per_day': integerSetting(
    0,
    'Requests per UTC day to one RPC endpoint when neither the chain (chain:set --requests-per-day) nor its family sets a budget (0: no daily cap)',
    { min: 0, max: 1_000_000_000 }
  ),
  'chains.verify_requests_per_second': integerSetting(
    2,
    "Requests per second one RPC endpoint takes for payers' transaction-hash checks, on a budget apart from the scanner's (never more than the endpoint's own)",
    { min: 1, max: 100000 }
  ),
  'chains.verify_requests_per_day': integerSetting(
    2000,
    "Requests per UTC day one RPC endpoint takes for payers' transaction-hash checks, apart from the scanner's budget (0: no daily cap)",
    { min: 0, max: 1_000_000_000 }
  ),
  'chains.verify_failed_cache_minutes': integerSetting(
    3,
    'How long a transaction hash that failed its check is answered from memory (same order, same hash), without asking the chain again (0: not kept)',
    { min: 0, max: 1440 }
  ),
  'chains.dust_percent': integerSetting(
    50,
    'A transfer below this percentage of the smallest amount a watched order of its token waits for is dust: dropped before any further RPC call and counted, not recorded (never below one amount step)',
    { min: 0, max: 100 }
  ),
  'chains.max_blocks_per_scan': integerSetting(
    5000,
    'Blocks one scan run covers at most; a chain behind catches up over runs',
    {
      min: 1,
      max: 1000000,
    }
  ),
  'chains.balance_check_minutes': integerSetting(
    10,
    'How often each watched address has its balance read in each enabled token (one read each), to find incoming value the scanner could not see; 0 turns the balance watch off',
    { min: 0, max: 1440 }
  ),

  // Console sign-in (docs/console.md "Sign-in security").
  'console.require_2fa_admins': booleanSetting(
    true,
    'Administrators (role admin) must use two-factor sign-in: until they turn it on, they can only reach the enrolment page and sign out'
  ),

  // GET /metrics (README "Operations"). Neither set: loopback clients only.
  'metrics.token': stringSetting(
    '',
    'Bearer token a Prometheus scraper sends to GET /metrics (Authorization: Bearer <token>); empty: no token asked',
    { maxLength: 200, secret: true }
  ),
  'metrics.allowed_ips': ipListSetting(
    'Client addresses and CIDR ranges allowed to GET /metrics (comma-separated; empty: any when a token is set, else loopback only)'
  ),

  'site.cashier_name': stringSetting('Crypto Cashier', 'Name shown on the cashier page', {
    maxLength: 100,
  }),
  'site.logo_url': stringSetting('', 'Logo URL of the cashier page', { maxLength: 500 }),
  'site.website_title': stringSetting('Crypto Payment', 'Title of the cashier page', {
    maxLength: 100,
  }),
  'site.support_link': stringSetting('', 'Support link shown to payers', { maxLength: 500 }),
  'site.background_color': stringSetting('', 'Background colour of the cashier page', {
    maxLength: 20,
    pattern: COLOR,
  }),
  'site.background_image_url': stringSetting('', 'Background image URL of the cashier page', {
    maxLength: 500,
  }),
} as const

export type Settings = typeof SETTINGS
export type SettingKey = keyof Settings
export type SettingValue<K extends SettingKey> = ReturnType<Settings[K]['parse']>

export function isSettingKey(key: string): key is SettingKey {
  return Object.prototype.hasOwnProperty.call(SETTINGS, key)
}
