import Chain from '#models/chain'
import auditLog from '#services/audit/audit_log'
import { snapshot } from '#services/audit/audit_snapshots'
import Token from '#models/token'
import chainRegistry from '#chains/chain_registry'
import { explorerTemplateProblem } from '#chains/explorer_links'
import { InvalidAddressError, InvalidOptionsError, type ChainFamily } from '#chains/chain_family'
import { OperatorError, type Refusal } from '#support/cli/operator_error'
import { refuseSealedLookalike } from '#services/operators/sealed_lookalike'
import { testChainConnection, type ConnectionTest } from '#chains/connection_check'
import { MASK, redactUrl } from '#support/http/redaction'
import { isUniqueViolation } from '#support/database/database_errors'
import settings from '#settings/settings_service'
import { isProviderTarget } from '#payments/payment_provider'

export type ChainChanges = {
  enabled?: boolean
  rpcUrls?: string[]
  /** WebSocket endpoint for head notifications (ws:// or wss://); '' or null removes it. */
  wsUrl?: string | null
  confirmations?: number
  scanIntervalSeconds?: number
  blockTimeSeconds?: number
  displayName?: string
  /** Family of a new network (one an enabled plugin brings). */
  family?: string
  /** Family options to set (text values, validated by the family); "" removes one. */
  options?: Record<string, string>
  apiKey?: string
  /** Explorer URL of a transaction with `{tx}`; '' clears it. */
  explorerTxUrl?: string
  /** Requests per second to each RPC endpoint; null: the family's default again. */
  requestsPerSecond?: number | null
  /** Requests per UTC day to each RPC endpoint (0: no daily cap); null: the family's default again. */
  requestsPerDay?: number | null
}

/** What a refusal of a chain change is about: an input of ChainChanges, the network's name, or one family option. */
export type ChainInput = keyof ChainChanges | 'network' | `option:${string}`

/**
 * A refusal of one input of a chain change (an OperatorError: the command
 * prints it as any other); the console shows it at that input's field.
 */
export class ChainInputError extends OperatorError {
  constructor(
    readonly input: ChainInput,
    message: string,
    refusal?: Refusal
  ) {
    super(message, refusal)
  }
}

/** Endpoints a chain may list, and the longest URL taken. */
const MAX_RPC_URLS = 10
const MAX_URL_LENGTH = 2000
/** Longest wait of a connection test, whatever the RPC timeout setting says. */
const MAX_TEST_TIMEOUT_MS = 15_000

/**
 * A request budget as typed (a flag, a form field): "" is null (the
 * provider's default again), else a number. `label` names the input.
 */
export function budgetInput(value: string | undefined, label: string): number | null | undefined {
  if (value === undefined) return undefined
  const text = value.trim()
  if (text === '') return null
  if (!/^\d+(\.\d+)?$/.test(text))
    throw new OperatorError(`${label} takes a number, not "${value}"`, {
      key: 'budget_not_number',
      args: { label, value },
    })
  return Number(text)
}

/** Family options typed as `key=value` items (flags, or the lines of a form); an item without "=" is refused. */
export function optionsInput(items: string[], label: string): Record<string, string> {
  const options: Record<string, string> = {}
  for (const item of items) {
    const match = /^([A-Za-z][A-Za-z0-9_]*)=(.*)$/s.exec(item.trim())
    if (!match)
      throw new OperatorError(`${label} takes key=value, not "${item}"`, {
        key: 'option_not_key_value',
        args: { label, item },
      })
    options[match[1]] = match[2].trim()
  }
  return options
}

export type TokenChanges = {
  contract?: string
  native?: boolean
  decimals?: number
  /** Decimals of payable amounts (2 to 6). */
  precision?: number
  enabled?: boolean
}

/**
 * Chains and their tokens as operators manage them (ace commands today,
 * the admin console later): every input is checked here (family options
 * by the chain's family), and a refusal is an OperatorError whose message
 * is meant for the operator.
 */
export class ChainAdmin {
  constructor(protected audit = auditLog) {}

  /** The chain of a network; an unknown one is refused with the list of known ones. */
  async find(network: string) {
    const chain = await Chain.findBy('network', network.toLowerCase())
    if (!chain) {
      const chains = await Chain.query().orderBy('sort_order')
      const known = chains.map((row) => row.network)
      throw new OperatorError(`Unknown network "${network}". Known networks: ${known.join(', ')}`, {
        key: 'unknown_network',
        args: { network, known: known.join(', ') },
      })
    }
    return chain
  }

  /** The chain's family; refused when no enabled plugin brings it. */
  familyOf(chain: Chain): ChainFamily {
    const family = chainRegistry.find(chain.family)
    if (!family)
      throw new OperatorError(
        `No enabled plugin brings the family "${chain.family}" of ${chain.network}`,
        { key: 'family_plugin_off', args: { family: chain.family, network: chain.network } }
      )
    return family
  }

  /**
   * Asks each RPC endpoint of the chain for the head of the chain (block,
   * slot or seqno, through the family), each within `timeoutMs` (default:
   * the RPC timeout setting, at most 15 s): the head and the latency, or
   * why it failed. Reads only; the saved configuration is the one tested.
   */
  async testConnection(
    network: string,
    options: { timeoutMs?: number } = {}
  ): Promise<ConnectionTest> {
    const chain = await this.find(network)
    const family = this.familyOf(chain)
    if (!family.head)
      throw new OperatorError(`The ${chain.family} family cannot report the head of its chain`, {
        key: 'family_no_head',
        args: { family: chain.family },
      })
    if (chain.rpcUrls.length === 0) {
      throw new OperatorError(`${chain.network} has no RPC endpoint to test: add one first`, {
        key: 'no_rpc_to_test',
        args: { network: chain.network },
      })
    }
    const timeoutMs = options.timeoutMs ?? (await this.#testTimeout())
    return testChainConnection(chain, family, timeoutMs)
  }

  /**
   * The RPC URLs to store: blank entries dropped, each checked. A URL as
   * listings show it (its key masked with ***) stands for the stored URL it
   * masks, so that a form filled with the masked list can be sent back
   * without ever showing the keys.
   */
  #rpcUrls(chain: Chain, urls: string[]): string[] {
    const stored = chain.rpcUrls ?? []
    const result: string[] = []
    for (const entry of urls.map((url) => url.trim()).filter((url) => url !== '')) {
      let url = entry
      if (entry.includes(MASK)) {
        const original = stored.find(
          (candidate) => candidate !== redactUrl(candidate) && redactUrl(candidate) === entry
        )
        if (!original) {
          throw new ChainInputError(
            'rpcUrls',
            `"${entry}" has a masked part (${MASK}) that matches no stored URL: type the URL in full`,
            { key: 'masked_url_unknown', args: { entry, mask: MASK } }
          )
        }
        url = original
      }
      if (url.length > MAX_URL_LENGTH)
        throw new ChainInputError('rpcUrls', `An RPC URL is at most ${MAX_URL_LENGTH} characters`, {
          key: 'rpc_url_too_long',
          args: { max: MAX_URL_LENGTH },
        })
      let parsed: URL
      try {
        parsed = new URL(url)
      } catch {
        throw new ChainInputError('rpcUrls', `"${redactUrl(url)}" is not a URL`, {
          key: 'not_a_url',
          args: { url: redactUrl(url) },
        })
      }
      if (!['http:', 'https:', 'ws:', 'wss:'].includes(parsed.protocol)) {
        throw new ChainInputError(
          'rpcUrls',
          `"${redactUrl(url)}" must be an http(s) or ws(s) URL`,
          { key: 'rpc_url_scheme', args: { url: redactUrl(url) } }
        )
      }
      if (result.includes(url))
        throw new ChainInputError('rpcUrls', `"${redactUrl(url)}" is listed twice`, {
          key: 'url_listed_twice',
          args: { url: redactUrl(url) },
        })
      result.push(url)
    }
    if (result.length > MAX_RPC_URLS)
      throw new ChainInputError('rpcUrls', `A chain takes at most ${MAX_RPC_URLS} RPC URLs`, {
        key: 'too_many_rpc_urls',
        args: { max: MAX_RPC_URLS },
      })
    return result
  }

  /**
   * The WebSocket endpoint to store (null: none). Only a family that can
   * watch heads takes one; the URL as listings show it (masked) stands for
   * the stored one.
   */
  #wsUrl(chain: Chain, input: string | null): string | null {
    const entry = (input ?? '').trim()
    if (entry === '') return null
    if (!this.familyOf(chain).watchHeads) {
      throw new ChainInputError(
        'wsUrl',
        `The ${chain.family} family takes no WebSocket endpoint: its chains are polled`,
        { key: 'family_no_ws', args: { family: chain.family } }
      )
    }
    let url = entry
    if (entry.includes(MASK)) {
      const stored = chain.wsUrl ?? ''
      if (!stored || stored === redactUrl(stored) || redactUrl(stored) !== entry) {
        throw new ChainInputError(
          'wsUrl',
          `"${entry}" has a masked part (${MASK}) that matches no stored URL: type the URL in full`,
          { key: 'masked_url_unknown', args: { entry, mask: MASK } }
        )
      }
      url = stored
    }
    if (url.length > MAX_URL_LENGTH)
      throw new ChainInputError(
        'wsUrl',
        `A WebSocket URL is at most ${MAX_URL_LENGTH} characters`,
        { key: 'ws_url_too_long', args: { max: MAX_URL_LENGTH } }
      )
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      throw new ChainInputError('wsUrl', `"${redactUrl(url)}" is not a URL`, {
        key: 'not_a_url',
        args: { url: redactUrl(url) },
      })
    }
    if (!['ws:', 'wss:'].includes(parsed.protocol)) {
      throw new ChainInputError(
        'wsUrl',
        `"${redactUrl(url)}" must be a ws:// or wss:// URL (the node's WebSocket endpoint)`,
        { key: 'ws_url_scheme', args: { url: redactUrl(url) } }
      )
    }
    return url
  }

  /**
   * The chain's options with `changes` applied ("" removes an option),
   * checked by the chain's family.
   */
  #familyOptions(
    chain: Chain,
    changes: Record<string, string>,
    input: ChainInput = 'options'
  ): Record<string, unknown> {
    const family = this.familyOf(chain)
    if (!family.validateOptions)
      throw new ChainInputError(input, `The ${chain.family} family takes no options`, {
        key: 'family_no_options',
        args: { family: chain.family },
      })
    const merged: Record<string, unknown> = { ...chain.options }
    for (const [key, value] of Object.entries(changes)) {
      if (value === '') delete merged[key]
      else merged[key] = value
    }
    try {
      return family.validateOptions(merged)
    } catch (error) {
      if (error instanceof InvalidOptionsError)
        throw new ChainInputError(input, error.message, {
          key: 'invalid_options',
          args: { reason: error.message },
          reason: error.reason,
        })
      throw error
    }
  }

  /**
   * Changes a chain, or adds a network when `family` is given and the
   * network is new (its family cannot change afterwards). A network added
   * here is not tested: `add` tests it first (the console).
   */
  async set(network: string, changes: ChainChanges) {
    const name = network.toLowerCase()
    let chain = await Chain.findBy('network', name)
    const before = chain ? snapshot.chain(chain) : null
    if (!chain) {
      if (!changes.family) {
        await this.find(name) // throws the "unknown network" message
        return null as never
      }
      chain = await this.#newChain(name, changes.family)
    } else if (changes.family && changes.family !== chain.family) {
      throw new ChainInputError(
        'family',
        `The family of ${name} is ${chain.family}; it cannot be changed`,
        { key: 'family_fixed', args: { network: name, family: chain.family } }
      )
    }
    this.#apply(chain, changes)
    return this.#save(chain, before)
  }

  /**
   * `chain:set NETWORK --family F …`: a new network given RPC URLs, of a
   * family that can test an endpoint, is added through `add` (the URLs
   * tested, the chain id checked, nothing written on a refusal), as the
   * console's form does. Without a URL (nothing to test), of a family that
   * cannot test, for an existing network, or `unchecked` (an endpoint not
   * reachable from here yet): through `set`. `tested` says which.
   */
  async setOrAdd(
    network: string,
    changes: ChainChanges,
    options: { unchecked?: boolean } = {}
  ): Promise<{ chain: Chain; tested: boolean }> {
    const name = network.trim().toLowerCase()
    const family = changes.family ? chainRegistry.find(changes.family) : null
    const testable =
      family?.head !== undefined &&
      (changes.rpcUrls?.length ?? 0) > 0 &&
      !options.unchecked &&
      !(await Chain.findBy('network', name))
    if (!testable) return { chain: await this.set(name, changes), tested: false }
    return { chain: await this.add(name, { ...changes, family: family!.name }), tested: true }
  }

  /**
   * Adds a network of an installed family once its RPC endpoints prove it:
   * each must answer the head (ChainFamily.head) and serve the network the
   * options name (ChainFamily.checkEndpoint, e.g. the chain id the endpoint
   * reports equals a chain id option). An endpoint that cannot be reached,
   * answers an error or serves another network refuses the whole change,
   * at the input it concerns, and nothing is written; the endpoints' state
   * is not kept either. The options of the family's `networkOptions` are required.
   * Audited as `chain.create`, like `set` with a family.
   */
  async add(
    network: string,
    changes: ChainChanges & { family: string },
    options: { timeoutMs?: number } = {}
  ) {
    const name = network.trim().toLowerCase()
    if (await Chain.findBy('network', name)) throw this.#exists(name)
    const chain = await this.#newChain(name, changes.family)
    const family = this.familyOf(chain)
    if (!family.head) {
      throw new ChainInputError(
        'family',
        `The ${family.name} family cannot test an endpoint: add ${name} with chain:set ${name} --family ${family.name}`,
        { key: 'family_cannot_test', args: { family: family.name, network: name } }
      )
    }
    for (const field of family.networkOptions ?? []) {
      const value = (changes.options?.[field.name] ?? '').trim()
      if (value === '') {
        throw new ChainInputError(
          `option:${field.name}`,
          `Give the ${field.label.toLowerCase()} of ${name}: the endpoint is checked against it`,
          { key: 'option_required', args: { option: field.label.toLowerCase(), network: name } }
        )
      }
      // Checked alone first, so that a refusal names its own field.
      this.#familyOptions(chain, { [field.name]: value }, `option:${field.name}`)
    }
    this.#apply(chain, changes)
    if (chain.rpcUrls.length === 0) {
      throw new ChainInputError(
        'rpcUrls',
        `Give an RPC URL of ${name}: it is tested before the network is added`,
        { key: 'rpc_url_required', args: { network: name } }
      )
    }
    const timeoutMs = options.timeoutMs ?? (await this.#testTimeout())
    const test = await testChainConnection(chain, family, timeoutMs, { remember: false })
    const failed = test.endpoints.find((endpoint) => !endpoint.ok)
    if (failed?.mismatch) {
      const label =
        family.networkOptions?.find((option) => option.name === failed.mismatch)?.label ??
        failed.mismatch
      throw new ChainInputError(
        `option:${failed.mismatch}`,
        `${failed.url}: ${failed.error}. Nothing was added: check the ${label.toLowerCase()} or the URL.`,
        {
          key: 'endpoint_mismatch',
          args: { url: failed.url, error: String(failed.error), option: label.toLowerCase() },
        }
      )
    }
    if (failed) {
      throw new ChainInputError(
        'rpcUrls',
        `${failed.url} did not answer: ${failed.error?.replace(/\.+$/, '')}. Nothing was added.`,
        {
          key: 'endpoint_no_answer',
          args: { url: failed.url, error: String(failed.error?.replace(/\.+$/, '')) },
        }
      )
    }
    try {
      return await this.#save(chain, null)
    } catch (error) {
      // Another admin added the same network meanwhile.
      if (isUniqueViolation(error)) throw this.#exists(name)
      throw error
    }
  }

  #exists(name: string) {
    return new ChainInputError(
      'network',
      `${name} exists already: change it on its page or with chain:set ${name}`,
      { key: 'network_exists', args: { network: name } }
    )
  }

  /** The RPC timeout setting, at most MAX_TEST_TIMEOUT_MS: a test waits no longer. */
  async #testTimeout() {
    return Math.min((await settings.get('chains.rpc_timeout_seconds')) * 1000, MAX_TEST_TIMEOUT_MS)
  }

  /** A network not saved yet, with the defaults of `chain:set --family`, last in the list. */
  async #newChain(name: string, familyName: string): Promise<Chain> {
    if (!/^[a-z0-9-]{1,32}$/.test(name)) {
      throw new ChainInputError(
        'network',
        'A network name is 1 to 32 lower-case letters, digits or "-"',
        { key: 'network_name_format' }
      )
    }
    // A switch's network names a chain or a payment provider: never both.
    if (isProviderTarget(name)) {
      throw new ChainInputError(
        'network',
        `"${name}" is the name of a payment channel (a hosted provider): choose another network name`,
        { key: 'network_name_is_channel', args: { network: name } }
      )
    }
    if (!chainRegistry.has(familyName)) {
      throw new ChainInputError(
        'family',
        `Unknown chain family "${familyName}". Families: ${chainRegistry.names().join(', ')}`,
        {
          key: 'unknown_family',
          args: { family: familyName, families: chainRegistry.names().join(', ') },
        }
      )
    }
    const last = await Chain.query().orderBy('sort_order', 'desc').first()
    const chain = new Chain()
    chain.merge({
      network: name,
      family: familyName,
      displayName: name,
      options: {},
      enabled: true,
      rpcUrls: [],
      confirmations: 1,
      scanIntervalSeconds: 10,
      blockTimeMs: 12000,
      sortOrder: (last?.sortOrder ?? 0) + 10,
      apiKey: '',
      explorerTxUrl: '',
      wsUrl: null,
      // The provider's default budget (the columns' NULL), so that the chain as saved is whole.
      rpcRequestsPerSecond: null,
      rpcRequestsPerDay: null,
    })
    return chain
  }

  /** Applies `changes` to the chain (not saved), each input checked; refusals are ChainInputErrors. */
  #apply(chain: Chain, changes: ChainChanges) {
    if (changes.enabled !== undefined) chain.enabled = changes.enabled
    if (changes.displayName !== undefined) {
      const displayName = changes.displayName.trim()
      if (displayName === '' || displayName.length > 64) {
        throw new ChainInputError('displayName', 'The display name is 1 to 64 characters', {
          key: 'display_name_length',
        })
      }
      chain.displayName = displayName
    }
    if (changes.options !== undefined && Object.keys(changes.options).length > 0) {
      chain.options = this.#familyOptions(chain, changes.options)
    }
    if (changes.apiKey !== undefined) {
      if (changes.apiKey.trim().length > 500)
        throw new ChainInputError('apiKey', 'An API key is at most 500 characters', {
          key: 'chain_api_key_too_long',
        })
      refuseSealedLookalike(changes.apiKey.trim())
      chain.apiKey = changes.apiKey.trim() // encrypted by the model
    }
    if (changes.explorerTxUrl !== undefined) {
      const template = changes.explorerTxUrl.trim()
      const problem = explorerTemplateProblem(template)
      if (problem)
        throw new ChainInputError('explorerTxUrl', problem.message, problem.refusal ?? undefined)
      chain.explorerTxUrl = template
    }
    if (changes.rpcUrls !== undefined) chain.rpcUrls = this.#rpcUrls(chain, changes.rpcUrls)
    if (changes.wsUrl !== undefined) chain.wsUrl = this.#wsUrl(chain, changes.wsUrl)
    if (changes.confirmations !== undefined) {
      if (
        !Number.isInteger(changes.confirmations) ||
        changes.confirmations < 0 ||
        changes.confirmations > 1000
      ) {
        throw new ChainInputError(
          'confirmations',
          'Confirmations must be a whole number from 0 to 1000',
          { key: 'confirmations_range' }
        )
      }
      chain.confirmations = changes.confirmations
    }
    if (changes.scanIntervalSeconds !== undefined) {
      if (
        !Number.isInteger(changes.scanIntervalSeconds) ||
        changes.scanIntervalSeconds < 1 ||
        changes.scanIntervalSeconds > 3600
      ) {
        throw new ChainInputError(
          'scanIntervalSeconds',
          'The scan interval must be a whole number of seconds from 1 to 3600',
          { key: 'scan_interval_range' }
        )
      }
      chain.scanIntervalSeconds = changes.scanIntervalSeconds
    }
    if (changes.requestsPerSecond !== undefined) {
      const value = changes.requestsPerSecond
      if (value !== null && (!Number.isFinite(value) || value < 0.01 || value > 100_000)) {
        throw new ChainInputError(
          'requestsPerSecond',
          'Requests per second must be a number from 0.01 to 100000 ("" for the default)',
          { key: 'requests_per_second_range' }
        )
      }
      chain.rpcRequestsPerSecond = value
    }
    if (changes.requestsPerDay !== undefined) {
      const value = changes.requestsPerDay
      if (
        value !== null &&
        (!Number.isSafeInteger(value) || value < 0 || value > 1_000_000_000_000)
      ) {
        throw new ChainInputError(
          'requestsPerDay',
          'Requests per day must be a whole number from 0 (no daily cap) up ("" for the default)',
          { key: 'requests_per_day_range' }
        )
      }
      chain.rpcRequestsPerDay = value
    }
    if (changes.blockTimeSeconds !== undefined) {
      const ms = Math.round(changes.blockTimeSeconds * 1000)
      if (!Number.isFinite(changes.blockTimeSeconds) || ms < 100 || ms > 600_000) {
        throw new ChainInputError(
          'blockTimeSeconds',
          'The block time must be from 0.1 to 600 seconds',
          { key: 'block_time_range' }
        )
      }
      chain.blockTimeMs = ms
    }
  }

  /** Saves the chain and its audit row in one transaction (`before` null: a new network). */
  #save(chain: Chain, before: ReturnType<typeof snapshot.chain> | null) {
    return this.audit.change(
      async (trx) => {
        chain.useTransaction(trx)
        await chain.save()
        return chain
      },
      (saved) => ({
        action: before ? 'chain.update' : 'chain.create',
        subjectType: 'chain',
        subjectId: saved.network,
        before,
        after: snapshot.chain(saved),
      })
    )
  }

  /** Adds a token; refused when the network has that symbol already (setToken changes it). */
  async addToken(network: string, symbol: string, changes: TokenChanges) {
    const chain = await this.find(network)
    const upper = symbol.trim().toUpperCase()
    if (await Token.query().where('network', chain.network).where('symbol', upper).first()) {
      throw new OperatorError(`${upper} is already a token of ${chain.network}`, {
        key: 'token_exists',
        args: { symbol: upper, network: chain.network },
      })
    }
    return this.setToken(chain.network, upper, changes)
  }

  /** Changes a token of a network, or adds one (then `decimals` and `contract` or `native` are needed). */
  async setToken(network: string, symbol: string, changes: TokenChanges) {
    const chain = await this.find(network)
    const upper = symbol.toUpperCase()
    if (!/^[A-Z0-9]{1,16}$/.test(upper)) {
      throw new OperatorError('A token symbol is 1 to 16 letters or digits', {
        key: 'token_symbol_format',
      })
    }
    if (changes.contract !== undefined && changes.native) {
      throw new OperatorError('Give either --contract or --native, not both', {
        key: 'contract_and_native',
      })
    }
    let token = await Token.query().where('network', chain.network).where('symbol', upper).first()
    const before = token ? snapshot.token(token) : null
    if (!token) {
      if (changes.decimals === undefined || (changes.contract === undefined && !changes.native)) {
        throw new OperatorError(
          `${upper} is not set up on ${chain.network} yet: give --decimals and either --contract or --native`,
          { key: 'token_not_set_up', args: { symbol: upper, network: chain.network } }
        )
      }
      token = new Token()
      token.merge({ network: chain.network, symbol: upper, enabled: true, amountPrecision: 2 })
    }

    if (changes.native) token.contract = null
    if (changes.contract !== undefined) {
      try {
        token.contract = this.familyOf(chain).normalizeContract(changes.contract)
      } catch (error) {
        if (error instanceof InvalidAddressError)
          throw new OperatorError(error.message, {
            key: 'invalid_contract',
            args: { reason: error.message },
            reason: error.reason,
          })
        throw error
      }
    }
    if (changes.decimals !== undefined) {
      if (!Number.isInteger(changes.decimals) || changes.decimals < 0 || changes.decimals > 36) {
        throw new OperatorError('Decimals must be a whole number from 0 to 36', {
          key: 'decimals_range',
        })
      }
      token.decimals = changes.decimals
    }
    if (changes.precision !== undefined) {
      if (!Number.isInteger(changes.precision) || changes.precision < 2 || changes.precision > 6) {
        throw new OperatorError('The amount precision must be a whole number from 2 to 6', {
          key: 'precision_range',
        })
      }
      token.amountPrecision = changes.precision
    }
    if (token.amountPrecision > token.decimals) {
      throw new OperatorError(
        `The amount precision (${token.amountPrecision}) cannot exceed the token's decimals (${token.decimals})`,
        {
          key: 'precision_over_decimals',
          args: { precision: token.amountPrecision, decimals: token.decimals },
        }
      )
    }
    if (changes.enabled !== undefined) token.enabled = changes.enabled
    const changed = token
    return this.audit.change(
      async (trx) => {
        changed.useTransaction(trx)
        await changed.save()
        return changed
      },
      (saved) => ({
        action: before ? 'token.update' : 'token.create',
        subjectType: 'token',
        subjectId: `${saved.network}/${saved.symbol}`,
        before,
        after: snapshot.token(saved),
      })
    )
  }
}

const chainAdmin = new ChainAdmin()
export default chainAdmin
