import limiter from '@adonisjs/limiter/services/main'
import { errors } from '@adonisjs/limiter'

/**
 * Console sign-in attempts (passwords and second-factor codes) are counted
 * in the database store, so every process of the gateway shares the counts,
 * and they are counted BEFORE the secret is checked: each count is one
 * atomic upsert, so of many parallel attempts only as many as the limit
 * ever reach the check, the others are refused unverified.
 *
 * Three counters, tried narrowest-first; an attempt refused by one is not
 * counted by the next, so one client hammering a blocked account does not
 * use up the account-wide ceiling:
 * - per client IP: guessing many accounts from one place;
 * - per account and IP: the lockout a guessing client meets, which leaves
 *   the account usable from everywhere else;
 * - per account, from anywhere: a ceiling for guessing spread over many
 *   IPs, high enough that one client cannot reach it, and with no block
 *   beyond its window, so it never locks an account out for long.
 */
export const LOGIN_LIMITS = {
  ip: { requests: 20, duration: '15 mins', blockDuration: '15 mins' },
  accountIp: { requests: 5, duration: '15 mins', blockDuration: '15 mins' },
  account: { requests: 50, duration: '1 hour' },
} as const

const ipKey = (ip: string) => `console_login_ip:${ip}`
const accountIpKey = (ip: string, email: string) =>
  `console_login_account_ip:${normal(email)}|${ip}`
const accountKey = (email: string) => `console_login_account:${normal(email)}`
const normal = (email: string) => email.trim().toLowerCase()

function counters(ip: string, email: string) {
  return [
    { use: limiter.use('database', LOGIN_LIMITS.ip), key: ipKey(ip) },
    { use: limiter.use('database', LOGIN_LIMITS.accountIp), key: accountIpKey(ip, email) },
    { use: limiter.use('database', LOGIN_LIMITS.account), key: accountKey(email) },
  ]
}

export const loginThrottle = {
  /**
   * Counts one attempt for this IP and account. 0: go ahead and check the
   * secret; otherwise the seconds to wait, and the secret must not be checked.
   */
  async attempt(ip: string, email: string): Promise<number> {
    for (const { use, key } of counters(ip, email)) {
      try {
        await use.consume(key)
      } catch (error) {
        if (error instanceof errors.E_TOO_MANY_REQUESTS)
          return Math.max(1, error.response.availableIn)
        throw error
      }
    }
    return 0
  },

  /**
   * A completed sign-in: this client's count for the account is cleared, and
   * the `attempts` it took to get in (password, second factor) are given back
   * to the IP and account-wide counts; failures before them stay counted
   * (the IP may be guessing other accounts, others this one).
   */
  async succeeded(ip: string, email: string, attempts: number) {
    const [byIp, byAccountIp, byAccount] = counters(ip, email)
    await byAccountIp.use.delete(byAccountIp.key)
    await byIp.use.decrement(byIp.key, attempts)
    await byAccount.use.decrement(byAccount.key, attempts)
  },
}
