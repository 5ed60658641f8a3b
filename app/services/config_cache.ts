import db from '@adonisjs/lucid/services/db'
import type { LucidModel, LucidRow } from '@adonisjs/lucid/types/model'
import ApiKey from '#models/api_key'
import Chain from '#models/chain'
import Token from '#models/token'
import Wallet from '#models/wallet'
import Rate from '#models/rate'

/** How long a process trusts its copy of the configuration tables (as settings: SETTINGS_REFRESH_MS). */
export const CONFIG_REFRESH_MS = 2000

/** A pair's live rate as the workers last computed it. */
export type LiveRateRow = {
  rate: string | null
  ok: boolean
  reason: string
  sources: string
  computedAt: number
}

/** One consistent copy of the tables that rarely change. */
export type ConfigSnapshot = {
  apiKeysByPid: Map<string, ApiKey>
  apiKeysById: Map<number, ApiKey>
  chainsByNetwork: Map<string, Chain>
  /** network → symbol → token */
  tokens: Map<string, Map<string, Token>>
  /** network → enabled wallets' addresses, in id order */
  enabledAddresses: Map<string, string[]>
  /** `TOKEN|FIAT` → fixed rate */
  rates: Map<string, Rate>
  /** `TOKEN|FIAT` → the live rate the workers computed (rate_current) */
  liveRates: Map<string, LiveRateRow>
  /**
   * `TOKEN|FIAT|API_KEY_ID` → the operator's markup on the live rate
   * (`~1.02`, `+0.3`); API key id 0 is the pair's markup for every key.
   */
  markups: Map<string, string>
  loadedAt: number
}

/**
 * The configuration read on every merchant request (API keys by pid,
 * chains, tokens, enabled wallets, fixed rates), kept in process like the
 * settings are (app/settings/settings_service.ts): the five small tables are
 * re-read whole at most every CONFIG_REFRESH_MS when asked for, so a change
 * made by the console of another process, an ace command or any other
 * writer is seen within 2 s; a change made in this process through the
 * models (every writer of these tables in app/services/operators does)
 * empties the cache when its transaction commits, so it is seen at once.
 *
 * A disabled or rotated API key therefore stops working at once in the
 * process that changed it and within 2 s everywhere else. The cache holds
 * the key rows as stored (secret encrypted); nothing outlives a reload.
 *
 * Reads never happen inside a caller's transaction: on SQLite the one
 * connection would be held by it.
 */
export class ConfigCache {
  #snapshot: ConfigSnapshot | null = null
  #loading: Promise<ConfigSnapshot> | null = null
  /** Bumped by invalidate() so that a load begun before a write is not kept. */
  #generation = 0
  #hooked = false
  #secrets = new WeakMap<ApiKey, string>()

  /** The current copy (re-read when older than CONFIG_REFRESH_MS). */
  async snapshot(): Promise<ConfigSnapshot> {
    this.#hook()
    const current = this.#snapshot
    if (current && Date.now() - current.loadedAt < CONFIG_REFRESH_MS) return current
    if (!this.#loading) {
      const generation = this.#generation
      const loading = this.#load()
        .then((snapshot) => {
          if (generation === this.#generation) this.#snapshot = snapshot
          return snapshot
        })
        .finally(() => {
          if (this.#loading === loading) this.#loading = null
        })
      this.#loading = loading
    }
    return this.#loading
  }

  async apiKeyByPid(pid: string): Promise<ApiKey | null> {
    const { apiKeysByPid } = await this.snapshot()
    return apiKeysByPid.get(pid) ?? null
  }

  /**
   * The pair's live rate (null when the workers have not priced it) and the
   * markup that applies: the API key's own, else the pair's, else none.
   */
  async liveRate(
    token: string,
    fiat: string,
    apiKeyId: number | null = null
  ): Promise<{ live: LiveRateRow | null; markup: string | null; perKey: boolean }> {
    const { liveRates, markups } = await this.snapshot()
    const pair = `${token}|${fiat}`
    const own = apiKeyId ? markups.get(`${pair}|${apiKeyId}`) : undefined
    return {
      live: liveRates.get(pair) ?? null,
      markup: own ?? markups.get(`${pair}|0`) ?? null,
      perKey: own !== undefined,
    }
  }

  async fixedRate(token: string, fiat: string): Promise<Rate | null> {
    const { rates } = await this.snapshot()
    return rates.get(`${token}|${fiat}`) ?? null
  }

  /**
   * The key's plain secret, decrypted once per copy of the table (the
   * decryption costs as much as the rest of the check): it goes with the
   * row it was read from, at the next reload or invalidation.
   */
  signingSecret(apiKey: ApiKey): string {
    let secret = this.#secrets.get(apiKey)
    if (secret === undefined) {
      secret = apiKey.signingSecret()
      this.#secrets.set(apiKey, secret)
    }
    return secret
  }

  /** Forget the copy: the next read goes to the database. */
  invalidate() {
    this.#generation++
    this.#snapshot = null
    this.#loading = null
  }

  /**
   * Empties the cache after a write through one of the cached models: at
   * once, and again when the writer's transaction commits (a read between
   * the two would otherwise keep the old rows for 2 s).
   */
  #hook() {
    if (this.#hooked) return
    this.#hooked = true
    const models: LucidModel[] = [ApiKey, Chain, Token, Wallet, Rate]
    const written = (row: LucidRow) => {
      this.invalidate()
      row.$trx?.after('commit', () => this.invalidate())
    }
    for (const model of models) {
      model.boot()
      model.after('save', written)
      model.after('delete', written)
    }
  }

  async #load(): Promise<ConfigSnapshot> {
    const client = db.connection()
    const [apiKeys, chains, tokens, wallets, rates, liveRows, markupRows] = await Promise.all([
      ApiKey.query({ client }),
      Chain.query({ client }),
      Token.query({ client }),
      client
        .from('wallets')
        .where('enabled', true)
        .orderBy('id')
        .select('network', 'address') as Promise<{ network: string; address: string }[]>,
      Rate.query({ client }),
      client
        .from('rate_current')
        .select('token', 'fiat', 'rate', 'ok', 'reason', 'sources', 'computed_at'),
      client.from('rate_markups').select('token', 'fiat', 'api_key_id', 'markup'),
    ])
    const snapshot: ConfigSnapshot = {
      apiKeysByPid: new Map(apiKeys.map((key) => [key.pid, key])),
      apiKeysById: new Map(apiKeys.map((key) => [key.id, key])),
      chainsByNetwork: new Map(chains.map((chain) => [chain.network, chain])),
      tokens: new Map(),
      enabledAddresses: new Map(),
      liveRates: new Map(
        liveRows.map((row: any) => [
          `${row.token}|${row.fiat}`,
          {
            rate: row.rate,
            ok: Boolean(row.ok),
            reason: row.reason,
            sources: row.sources,
            computedAt: Number(row.computed_at),
          },
        ])
      ),
      markups: new Map(
        markupRows.map((row: any) => [
          `${row.token}|${row.fiat}|${Number(row.api_key_id)}`,
          row.markup,
        ])
      ),
      rates: new Map(rates.map((rate) => [`${rate.token}|${rate.fiat}`, rate])),
      loadedAt: Date.now(),
    }
    for (const token of tokens) {
      let symbols = snapshot.tokens.get(token.network)
      if (!symbols) snapshot.tokens.set(token.network, (symbols = new Map()))
      symbols.set(token.symbol, token)
    }
    for (const wallet of wallets) {
      const list = snapshot.enabledAddresses.get(wallet.network)
      if (list) list.push(wallet.address)
      else snapshot.enabledAddresses.set(wallet.network, [wallet.address])
    }
    return snapshot
  }
}

const configCache = new ConfigCache()
export default configCache
