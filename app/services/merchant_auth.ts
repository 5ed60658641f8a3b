import { BlockList, isIP } from 'node:net'
import ApiKey from '#models/api_key'
import BusinessError from '#exceptions/business_error'
import { hexDigestsEqual, type SignableParams } from '#support/signing'

/** last_used_at is refreshed at most this often, to keep writes rare. */
const TOUCH_INTERVAL_MS = 60_000

/**
 * Finds the API key of a merchant request by `pid` and checks that it may
 * be used: active, from an allowed IP, correctly signed. Every refusal is a
 * 401 with a message saying which check failed.
 */
export class MerchantAuth {
  async authenticate(
    params: SignableParams,
    clientIp: string,
    verify: { field: string; expected: (secretKey: string) => string }
  ): Promise<ApiKey> {
    const pid = params.pid
    if (pid === undefined || pid === null || pid === '') {
      throw BusinessError.parameter('The pid field is required')
    }
    const apiKey = await ApiKey.findBy('pid', pid)
    if (!apiKey) throw BusinessError.signature(`Unknown pid ${pid}`)
    if (!apiKey.isActive) throw BusinessError.signature(`The API key of pid ${pid} is disabled`)
    if (!this.ipAllowed(apiKey, clientIp)) {
      throw BusinessError.signature(`Requests from ${clientIp} are not allowed for pid ${pid}`)
    }

    const given = params[verify.field]
    if (given === undefined || given === null || given === '') {
      throw BusinessError.signature(`The ${verify.field} field is required`)
    }
    if (!hexDigestsEqual(verify.expected(apiKey.secretKey), given)) {
      throw BusinessError.signature('Signature verification failed')
    }

    await this.#touch(apiKey)
    return apiKey
  }

  ipAllowed(apiKey: ApiKey, ip: string): boolean {
    const entries = apiKey.allowedIps
    if (entries.length === 0) return true
    // IPv4 clients of a dual-stack socket appear as ::ffff:a.b.c.d
    const clientIp = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip
    const family = isIP(clientIp)
    if (family === 0) return false
    const type = family === 6 ? 'ipv6' : 'ipv4'
    const list = new BlockList()
    for (const entry of entries) {
      const [address, prefix] = entry.split('/')
      const entryFamily = isIP(address)
      if (entryFamily === 0) continue
      const entryType = entryFamily === 6 ? 'ipv6' : 'ipv4'
      if (prefix === undefined) list.addAddress(address, entryType)
      else list.addSubnet(address, Number(prefix), entryType)
    }
    return list.check(clientIp, type)
  }

  async #touch(apiKey: ApiKey) {
    const now = Date.now()
    if (apiKey.lastUsedAt !== null && now - apiKey.lastUsedAt < TOUCH_INTERVAL_MS) return
    apiKey.lastUsedAt = now
    await apiKey.save()
  }
}

const merchantAuth = new MerchantAuth()
export default merchantAuth
