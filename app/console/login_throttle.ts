import limiter from '@adonisjs/limiter/services/main'

/**
 * Failed console sign-ins are counted per client IP and per account (the
 * e-mail tried, known or not) in the database store, so every process of
 * the gateway shares the counts. Past the limit, that IP or account waits
 * out the block before the password is even checked.
 */
export const LOGIN_LIMITS = {
  account: { requests: 5, duration: '15 mins', blockDuration: '15 mins' },
  ip: { requests: 20, duration: '15 mins', blockDuration: '15 mins' },
} as const

const accountLimiter = () => limiter.use('database', LOGIN_LIMITS.account)
const ipLimiter = () => limiter.use('database', LOGIN_LIMITS.ip)

const accountKey = (email: string) => `console_login_account:${email.trim().toLowerCase()}`
const ipKey = (ip: string) => `console_login_ip:${ip}`

async function waitOf(use: ReturnType<typeof accountLimiter>, key: string): Promise<number> {
  const state = await use.get(key)
  if (!state || state.remaining > 0) return 0
  return Math.max(1, Math.ceil(state.availableIn))
}

export const loginThrottle = {
  /** Seconds to wait before this IP or account may try again (0: go ahead). */
  async wait(ip: string, email: string): Promise<number> {
    const [byIp, byAccount] = await Promise.all([waitOf(ipLimiter(), ipKey(ip)), waitOf(accountLimiter(), accountKey(email))])
    return Math.max(byIp, byAccount)
  },

  /** Counts a failure (wrong password or wrong second factor); the last allowed one starts the block. */
  async failed(ip: string, email: string) {
    const counters = [
      { use: ipLimiter(), key: ipKey(ip), block: LOGIN_LIMITS.ip.blockDuration },
      { use: accountLimiter(), key: accountKey(email), block: LOGIN_LIMITS.account.blockDuration },
    ]
    for (const { use, key, block } of counters) {
      const state = await use.increment(key)
      if (state.remaining <= 0) await use.block(key, block)
    }
  },

  /** A successful sign-in clears the account's count (the IP's stays: it may be guessing other accounts). */
  async succeeded(email: string) {
    await accountLimiter().delete(accountKey(email))
  },
}
