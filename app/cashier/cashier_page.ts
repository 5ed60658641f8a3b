import { textOr } from '#support/text/catalogue'
import type Order from '#models/order'
import { OrderStatus } from '#models/order'
import Chain from '#models/chain'
import Token from '#models/token'
import { presentCashier } from '#services/order_presenter'
import { publicConfig } from '#services/public_config'
import { paymentUriOf } from '#services/payment_uri'
import { isOpen } from '#services/order_rules'
import { fractionDigits, toFixedDigits } from '#support/text/money'
import { qrSvg } from '#cashier/qr_svg'
import { siteLook, type SiteLook } from '#cashier/site_look'
import {
  languageChoices,
  messagesOf,
  translator,
  type Language,
  type Translate,
} from '#cashier/languages'
import { isWebAddress } from '#support/http/web_address'
import i18nManager from '@adonisjs/i18n/services/main'
import pluginRegistry from '#plugin_host/plugin_registry'
import providers from '#payments/payment_provider'
import { pluginKeyPrefix } from '#plugin_host/plugin_resources'

/** What the page shows first; the script moves between them afterwards. */
export type CashierState = 'choose' | 'pay' | 'provider' | 'paid' | 'expired'

export type PayTarget = {
  amount: string
  token: string
  networkName: string
  address: string
  uri: string
  qr: string
  addressQr: string
  /**
   * The "I have paid" dialog's intro: a family whose references take
   * several forms has its own text (its plugin's `cashier.hash_intro`),
   * the others the general one.
   */
  referenceIntro: string
}

export type Choice = { network: string; name: string; tokens: string[] }

/** Strings the script needs after the first render (messages, errors). */
export const SCRIPT_KEYS = [
  'pay.copied',
  'pay.copied_amount',
  'pay.copied_address',
  'pay.waiting',
  'confirming.progress',
  'confirming.hint',
  'confirming.view',
  'choose.working',
  'provider.waiting',
  'paid.redirect',
  'paid.view',
  'hash.checking',
  'hash.accepted',
  'hash.refused',
]

/**
 * Everything the cashier template needs for one order, computed on the
 * server so that the first render is complete without script: the state
 * from the order's status and time, the exact amount, the QR codes, the
 * choices of the public config, the texts in the payer's language.
 */
export async function cashierPage(order: Order, language: Language, now = Date.now()) {
  const t = translator(language)
  const config = await publicConfig()
  const data = presentCashier(order, now)
  const look = siteLook(config.site)
  const state = stateOf(order, now)

  const pay = order.isOnChain && state === 'pay' ? await payTarget(order, language, t) : null
  const paidAmount = order.isOnChain ? (pay?.amount ?? (await amountOf(order))) : ''
  const isParent = order.parentId === null
  const canChoose = isParent && isOpen(order, now)
  const choices: Choice[] = config.supported_assets.map((asset) => ({
    network: asset.network,
    name: asset.display_name,
    tokens: asset.tokens,
  }))
  const providerChoices = await providerChoicesOf(language, t)
  const merchantReturn = order.redirectUrl !== '' ? order.redirectUrl : ''

  return {
    language,
    t,
    languages: languageChoices(),
    look,
    title: pageTitle(look, t),
    initialView: state,
    order: data,
    fiat: { amount: order.amount, currency: order.currency },
    pay,
    paidAmount,
    // Never a link that is not http(s) (a row stored before pay_url was checked).
    providerUrl: order.isProviderOrder && isWebAddress(order.paymentUrl) ? order.paymentUrl : '',
    canChoose,
    choices,
    providerChoices,
    current: { network: order.network, token: order.token },
    countdown: countdownText(order.expirationTime - now),
    lifeMs: Math.max(1, order.expirationTime - order.createdAt),
    merchantReturn,
    returnPath: merchantReturn !== '' ? `/pay/return/${order.tradeId}` : '',
    script: scriptData(data, language, merchantReturn, order),
  }
}

export type CashierPage = Awaited<ReturnType<typeof cashierPage>>

function stateOf(order: Order, now: number): CashierState {
  if (order.status === OrderStatus.PAID) return 'paid'
  if (!isOpen(order, now)) return 'expired'
  if (order.status === OrderStatus.SELECTING) return 'choose'
  return order.isProviderOrder ? 'provider' : 'pay'
}

async function payTarget(order: Order, language: Language, t: Translate): Promise<PayTarget> {
  const [chain, token, uri] = await Promise.all([
    Chain.findBy('network', order.network),
    Token.query().where('network', order.network).where('symbol', order.token).first(),
    paymentUriOf(order),
  ])
  return {
    amount: displayAmount(order.actualAmount, token?.amountPrecision ?? 0),
    token: order.token,
    networkName: chain?.displayName || order.network,
    address: order.receiveAddress,
    uri,
    qr: await qrSvg(uri, t('pay.qr_label')),
    addressQr: await qrSvg(order.receiveAddress, t('pay.address_qr_label')),
    referenceIntro: referenceIntro(language, t, chain?.family),
  }
}

/** A hosted payment provider the payer may choose: its name (the switch's network), texts and tokens. */
export type ProviderChoice = { network: string; legend: string; hint: string; tokens: string[] }

/**
 * Each installed payment provider that offers itself (enabled, with
 * tokens), named by its plugin's `cashier.choice_legend` and
 * `cashier.choice_hint` when it brings them, else by the general texts.
 */
async function providerChoicesOf(language: Language, t: Translate): Promise<ProviderChoice[]> {
  const i18n = i18nManager.locale(language)
  const choices: ProviderChoice[] = []
  for (const provider of providers.all()) {
    const offer = provider.offer ? await provider.offer() : null
    if (!offer?.enabled || offer.tokens.length === 0) continue
    const plugin = pluginRegistry.pluginOfProvider(provider.name)
    const prefix = plugin ? pluginKeyPrefix(plugin) : `plugins.${provider.name}.`
    choices.push({
      network: provider.name,
      legend: textOr(i18n, `${prefix}cashier.choice_legend`, t('choose.provider')),
      hint: textOr(i18n, `${prefix}cashier.choice_hint`, t('choose.provider_hint')),
      tokens: offer.tokens,
    })
  }
  return choices
}

/**
 * The "I have paid" dialog's intro: the family's plugin may bring its own
 * (`lang/<locale>/cashier.json`'s `hash_intro`, for a family whose
 * references take several forms), else the general one.
 */
function referenceIntro(language: Language, t: Translate, family: string | undefined): string {
  const plugin = family ? pluginRegistry.pluginOfFamily(family) : undefined
  if (!plugin) return t('hash.intro')
  return textOr(
    i18nManager.locale(language),
    `${pluginKeyPrefix(plugin)}cashier.hash_intro`,
    t('hash.intro')
  )
}

async function amountOf(order: Order): Promise<string> {
  const token = await Token.query()
    .where('network', order.network)
    .where('symbol', order.token)
    .first()
  return displayAmount(order.actualAmount, token?.amountPrecision ?? 0)
}

/**
 * The amount to send, as plain ASCII digits (never localised), padded to
 * the token's precision ("13.8" → "13.80") but never rounded: if the
 * precision was lowered after the order was made, every digit still shows.
 */
export function displayAmount(amount: string, precision: number): string {
  return toFixedDigits(amount, Math.max(precision, fractionDigits(amount)))
}

/** "9:58", or "1:02:03" for lives over an hour; "0:00" once over. */
export function countdownText(remainingMs: number): string {
  const total = Math.max(0, Math.ceil(remainingMs / 1000))
  const hours = Math.floor(total / 3600)
  const minutes = Math.floor((total % 3600) / 60)
  const seconds = String(total % 60).padStart(2, '0')
  return hours > 0
    ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}`
    : `${minutes}:${seconds}`
}

function pageTitle(look: SiteLook, t: Translate): string {
  const name = look.websiteTitle || look.cashierName
  return name ? `${t('meta.title')} · ${name}` : t('meta.title')
}

/**
 * The script's starting point, embedded as JSON (not executable, so the
 * CSP allows it): the order as the cashier endpoints return it, and the
 * texts the script shows later.
 */
function scriptData(
  data: ReturnType<typeof presentCashier>,
  language: Language,
  merchantReturn: string,
  order: Order
) {
  const messages = messagesOf(language)
  const english = messagesOf('en')
  const strings: Record<string, string> = {}
  for (const key of Object.keys(english)) {
    if (SCRIPT_KEYS.includes(key) || key.startsWith('error.'))
      strings[key] = messages[key] ?? english[key]
  }
  return {
    order: data,
    strings,
    merchant_return: merchantReturn,
    return_path: merchantReturn !== '' ? `/pay/return/${order.tradeId}` : '',
  }
}

/** JSON for a <script type="application/json"> block: "<" cannot close it. */
export function embeddedJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
}
