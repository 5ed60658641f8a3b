import { randomBytes } from 'node:crypto'
import ApiKey from '#models/api_key'
import Chain from '#models/chain'
import Token from '#models/token'
import Wallet from '#models/wallet'
import Rate from '#models/rate'
import AmountLock from '#models/amount_lock'
import chainRegistry from '#chains/chain_registry'
import { explorerTemplateProblem } from '#chains/explorer_links'
import { InvalidOptionsError } from '#chains/chain_family'
import { OperatorError } from '#support/operator_error'
import { Decimal, fractionDigits, isDecimalLiteral, significantDigits, toDecimalString } from '#support/money'
import { isUniqueViolation } from '#support/database_errors'
import { looksSealed } from '#support/secret_box'

const SECRET_PATTERN = /^[\x21-\x7e]{16,128}$/

function newSecret() {
  return randomBytes(32).toString('hex')
}

function checkSecret(secret: string) {
  if (!SECRET_PATTERN.test(secret)) {
    throw new OperatorError('The secret must be 16 to 128 printable characters without spaces')
  }
  refuseSealedLookalike(secret)
}

/** Stored secrets are recognised as encrypted by their shape: a plain one must not have it. */
function refuseSealedLookalike(value: string) {
  if (looksSealed(value)) throw new OperatorError('The value has the shape of an encrypted value; choose another')
}

function checkIpEntries(entries: string[]) {
  for (const entry of entries) {
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(entry)) {
      throw new OperatorError(`"${entry}" is not an IP address or CIDR range`)
    }
  }
}

/**
 * The rules behind the operators' commands (API keys, chains, tokens,
 * wallets, rates), kept out of the command classes so that the console and
 * the tests use the same ones.
 */
export class OperatorService {
  // ---------------------------------------------------------------- API keys

  async createApiKey(options: { pid?: string; secret?: string; ips?: string[]; note?: string }) {
    const secret = options.secret ?? newSecret()
    checkSecret(secret)
    checkIpEntries(options.ips ?? [])
    let pid = options.pid
    if (pid !== undefined && !/^[A-Za-z0-9_-]{1,32}$/.test(pid)) {
      throw new OperatorError('The pid must be 1 to 32 letters, digits, "_" or "-" (numeric for compat shops)')
    }
    if (pid === undefined) {
      const numeric = (await ApiKey.all()).map((key) => key.pid).filter((value) => /^\d{1,15}$/.test(value))
      pid = String(Math.max(1000, ...numeric.map((value) => Number.parseInt(value, 10))) + 1)
    }
    try {
      return await ApiKey.create({
        pid,
        secretKey: secret, // encrypted by the model
        status: 'active',
        ipAllowlist: (options.ips ?? []).join(','),
        note: options.note ?? '',
      })
    } catch (error) {
      if (isUniqueViolation(error)) throw new OperatorError(`An API key with pid ${pid} already exists`)
      throw error
    }
  }

  async apiKey(pid: string) {
    const apiKey = await ApiKey.findBy('pid', pid)
    if (!apiKey) throw new OperatorError(`No API key with pid ${pid}`)
    return apiKey
  }

  async rotateApiKey(pid: string, secret?: string) {
    const apiKey = await this.apiKey(pid)
    const value = secret ?? newSecret()
    checkSecret(value)
    apiKey.secretKey = value // encrypted by the model
    await apiKey.save()
    return apiKey
  }

  async updateApiKey(pid: string, changes: { enabled?: boolean; ips?: string[] }) {
    const apiKey = await this.apiKey(pid)
    if (changes.enabled !== undefined) apiKey.status = changes.enabled ? 'active' : 'disabled'
    if (changes.ips !== undefined) {
      checkIpEntries(changes.ips)
      apiKey.ipAllowlist = changes.ips.join(',')
    }
    await apiKey.save()
    return apiKey
  }

  // ------------------------------------------------------------------ chains

  async chain(network: string) {
    const chain = await Chain.findBy('network', network.toLowerCase())
    if (!chain) {
      const known = (await Chain.query().orderBy('sort_order')).map((row) => row.network)
      throw new OperatorError(`Unknown network "${network}". Known networks: ${known.join(', ')}`)
    }
    return chain
  }

  /**
   * The chain's options with `changes` applied ("" removes an option),
   * checked by the chain's family.
   */
  #familyOptions(chain: Chain, changes: Record<string, string>): Record<string, unknown> {
    const family = chainRegistry.find(chain.family)
    if (!family) throw new OperatorError(`No enabled plugin brings the family "${chain.family}" of ${chain.network}`)
    if (!family.validateOptions) throw new OperatorError(`The ${chain.family} family takes no options`)
    const merged: Record<string, unknown> = { ...chain.options }
    for (const [key, value] of Object.entries(changes)) {
      if (value === '') delete merged[key]
      else merged[key] = value
    }
    try {
      return family.validateOptions(merged)
    } catch (error) {
      if (error instanceof InvalidOptionsError) throw new OperatorError(error.message)
      throw error
    }
  }

  async setChain(
    network: string,
    changes: {
      enabled?: boolean
      rpcUrls?: string[]
      confirmations?: number
      scanIntervalSeconds?: number
      blockTimeSeconds?: number
      displayName?: string
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
  ) {
    const name = network.toLowerCase()
    let chain = await Chain.findBy('network', name)
    if (!chain) {
      if (!changes.family) {
        await this.chain(name) // throws the "unknown network" message
        return null as never
      }
      if (!/^[a-z0-9-]{1,32}$/.test(name)) {
        throw new OperatorError('A network name is 1 to 32 lower-case letters, digits or "-"')
      }
      if (!chainRegistry.has(changes.family)) {
        throw new OperatorError(`Unknown chain family "${changes.family}". Families: ${chainRegistry.names().join(', ')}`)
      }
      const last = await Chain.query().orderBy('sort_order', 'desc').first()
      chain = new Chain()
      chain.merge({
        network: name,
        family: changes.family,
        displayName: changes.displayName ?? name,
        options: {},
        enabled: true,
        rpcUrls: [],
        confirmations: 1,
        scanIntervalSeconds: 10,
        blockTimeMs: 12000,
        sortOrder: (last?.sortOrder ?? 0) + 10,
        apiKey: '',
        explorerTxUrl: '',
      })
    } else if (changes.family && changes.family !== chain.family) {
      throw new OperatorError(`The family of ${name} is ${chain.family}; it cannot be changed`)
    }

    if (changes.enabled !== undefined) chain.enabled = changes.enabled
    if (changes.displayName !== undefined) chain.displayName = changes.displayName
    if (changes.options !== undefined && Object.keys(changes.options).length > 0) {
      chain.options = this.#familyOptions(chain, changes.options)
    }
    if (changes.apiKey !== undefined) {
      refuseSealedLookalike(changes.apiKey.trim())
      chain.apiKey = changes.apiKey.trim() // encrypted by the model
    }
    if (changes.explorerTxUrl !== undefined) {
      const template = changes.explorerTxUrl.trim()
      const problem = explorerTemplateProblem(template)
      if (problem) throw new OperatorError(problem)
      chain.explorerTxUrl = template
    }
    if (changes.rpcUrls !== undefined) {
      for (const url of changes.rpcUrls) {
        let parsed: URL
        try {
          parsed = new URL(url)
        } catch {
          throw new OperatorError(`"${url}" is not a URL`)
        }
        if (!['http:', 'https:', 'ws:', 'wss:'].includes(parsed.protocol)) {
          throw new OperatorError(`"${url}" must be an http(s) or ws(s) URL`)
        }
      }
      chain.rpcUrls = changes.rpcUrls
    }
    if (changes.confirmations !== undefined) {
      if (!Number.isInteger(changes.confirmations) || changes.confirmations < 0 || changes.confirmations > 1000) {
        throw new OperatorError('Confirmations must be a whole number from 0 to 1000')
      }
      chain.confirmations = changes.confirmations
    }
    if (changes.scanIntervalSeconds !== undefined) {
      if (
        !Number.isInteger(changes.scanIntervalSeconds) ||
        changes.scanIntervalSeconds < 1 ||
        changes.scanIntervalSeconds > 3600
      ) {
        throw new OperatorError('The scan interval must be a whole number of seconds from 1 to 3600')
      }
      chain.scanIntervalSeconds = changes.scanIntervalSeconds
    }
    if (changes.requestsPerSecond !== undefined) {
      const value = changes.requestsPerSecond
      if (value !== null && (!Number.isFinite(value) || value < 0.01 || value > 100_000)) {
        throw new OperatorError('Requests per second must be a number from 0.01 to 100000 ("" for the default)')
      }
      chain.rpcRequestsPerSecond = value
    }
    if (changes.requestsPerDay !== undefined) {
      const value = changes.requestsPerDay
      if (value !== null && (!Number.isSafeInteger(value) || value < 0 || value > 1_000_000_000_000)) {
        throw new OperatorError('Requests per day must be a whole number from 0 (no daily cap) up ("" for the default)')
      }
      chain.rpcRequestsPerDay = value
    }
    if (changes.blockTimeSeconds !== undefined) {
      const ms = Math.round(changes.blockTimeSeconds * 1000)
      if (!Number.isFinite(changes.blockTimeSeconds) || ms < 100 || ms > 600_000) {
        throw new OperatorError('The block time must be from 0.1 to 600 seconds')
      }
      chain.blockTimeMs = ms
    }
    await chain.save()
    return chain
  }

  // ------------------------------------------------------------------ tokens

  async setToken(
    network: string,
    symbol: string,
    changes: { contract?: string; native?: boolean; decimals?: number; precision?: number; enabled?: boolean }
  ) {
    const chain = await this.chain(network)
    const upper = symbol.toUpperCase()
    if (!/^[A-Z0-9]{1,16}$/.test(upper)) {
      throw new OperatorError('A token symbol is 1 to 16 letters or digits')
    }
    if (changes.contract !== undefined && changes.native) {
      throw new OperatorError('Give either --contract or --native, not both')
    }
    let token = await Token.query().where('network', chain.network).where('symbol', upper).first()
    if (!token) {
      if (changes.decimals === undefined || (changes.contract === undefined && !changes.native)) {
        throw new OperatorError(
          `${upper} is not set up on ${chain.network} yet: give --decimals and either --contract or --native`
        )
      }
      token = new Token()
      token.merge({ network: chain.network, symbol: upper, enabled: true, amountPrecision: 2 })
    }

    if (changes.native) token.contract = null
    if (changes.contract !== undefined) {
      token.contract = chainRegistry.family(chain.family).normalizeContract(changes.contract)
    }
    if (changes.decimals !== undefined) {
      if (!Number.isInteger(changes.decimals) || changes.decimals < 0 || changes.decimals > 36) {
        throw new OperatorError('Decimals must be a whole number from 0 to 36')
      }
      token.decimals = changes.decimals
    }
    if (changes.precision !== undefined) {
      if (!Number.isInteger(changes.precision) || changes.precision < 2 || changes.precision > 6) {
        throw new OperatorError('The amount precision must be a whole number from 2 to 6')
      }
      token.amountPrecision = changes.precision
    }
    if (token.amountPrecision > token.decimals) {
      throw new OperatorError(
        `The amount precision (${token.amountPrecision}) cannot exceed the token's decimals (${token.decimals})`
      )
    }
    if (changes.enabled !== undefined) token.enabled = changes.enabled
    await token.save()
    return token
  }

  // ----------------------------------------------------------------- wallets

  async addWallet(network: string, address: string) {
    const chain = await this.chain(network)
    const normalized = chainRegistry.family(chain.family).normalizeAddress(address)
    try {
      return await Wallet.create({ network: chain.network, address: normalized, enabled: true, note: '' })
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new OperatorError(`Wallet address already exists (10001): ${normalized} on ${chain.network}`)
      }
      throw error
    }
  }

  /**
   * Removes a wallet. Refused while orders still wait for a payment to it
   * (their payments would no longer be watched) unless `force` is given.
   */
  async removeWallet(network: string, address: string, force = false) {
    const chain = await this.chain(network)
    let normalized = address.trim()
    try {
      normalized = chainRegistry.family(chain.family).normalizeAddress(address)
    } catch {
      // a malformed address cannot be stored either: reported as not found
    }
    const wallet = await Wallet.query().where('network', chain.network).where('address', normalized).first()
    if (!wallet) throw new OperatorError(`No wallet ${address} on ${chain.network}`)
    const waiting = await AmountLock.query()
      .where('network', chain.network)
      .where('address', wallet.address)
      .count('* as total')
    const count = Number(waiting[0].$extras.total)
    if (count > 0 && !force) {
      throw new OperatorError(
        `${count} order(s) still wait for a payment to ${wallet.address}; let them expire first, or use --force`
      )
    }
    await wallet.delete()
    return wallet
  }

  // ------------------------------------------------------------------- rates

  async setRate(token: string, fiat: string, rate: string) {
    const symbol = token.toUpperCase()
    const currency = fiat.toUpperCase()
    if (!/^[A-Z0-9]{1,16}$/.test(symbol)) throw new OperatorError('The token must be a symbol such as USDT')
    if (!/^[A-Z]{3,10}$/.test(currency)) throw new OperatorError('The fiat must be a currency code such as CNY')
    const text = rate.trim()
    if (!isDecimalLiteral(text) || !new Decimal(text).gt(0)) {
      throw new OperatorError(`The rate must be a positive decimal number (1 ${symbol} = RATE ${currency})`)
    }
    if (fractionDigits(toDecimalString(text)) > 12 || significantDigits(text) > 15) {
      throw new OperatorError('The rate may have at most 12 decimals and 15 significant digits')
    }
    const value = toDecimalString(text)
    const existing = await Rate.query().where('token', symbol).where('fiat', currency).first()
    if (existing) {
      existing.rate = value
      existing.source = 'fixed'
      await existing.save()
      return existing
    }
    return Rate.create({ token: symbol, fiat: currency, rate: value, source: 'fixed' })
  }
}

const operatorService = new OperatorService()
export default operatorService
