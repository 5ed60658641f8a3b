import { defineConfig, drivers } from '@adonisjs/core/hash'

/**
 * `scrypt` hashes the console's passwords with OWASP's parameters
 * (N=2^17, r=8, p=1: 128 MiB and a few hundred milliseconds per hash;
 * maxMemory leaves room above the 128 × N × r bytes Node needs). Hashes
 * made with older parameters still verify (each hash carries its own) and
 * are redone at the next successful sign-in (AdminUsers.verifyCredentials).
 * At most UV_THREADPOOL_SIZE (default 4) hashes run at once, so at most
 * that many × 128 MiB.
 *
 * `recovery` hashes two-factor recovery codes: 50 random bits each, not
 * chosen by a person, so the former cost is enough and confirming the
 * ten of them does not take ten times 128 MiB.
 */
export const PASSWORD_SCRYPT = {
  cost: 131072,
  blockSize: 8,
  parallelization: 1,
  maxMemory: 256 * 1024 * 1024,
}

/**
 * The test suite (NODE_ENV=test, set by `node ace test`) hashes with the
 * former cost: thousands of sign-ins on a busy 2-core machine would each
 * take seconds. tests/functional/admin/password_hashing.spec.ts checks
 * PASSWORD_SCRYPT itself and the rehash from one cost to another.
 */
export const TEST_PASSWORD_SCRYPT = { ...PASSWORD_SCRYPT, cost: 16384 }

const hashConfig = defineConfig({
  default: 'scrypt',
  list: {
    scrypt: drivers.scrypt(
      process.env.NODE_ENV === 'test' ? TEST_PASSWORD_SCRYPT : PASSWORD_SCRYPT
    ),
    recovery: drivers.scrypt({
      cost: 16384,
      blockSize: 8,
      parallelization: 1,
      maxMemory: 33554432,
    }),
  },
})

export default hashConfig

declare module '@adonisjs/core/types' {
  export interface HashersList extends InferHashers<typeof hashConfig> {}
}
