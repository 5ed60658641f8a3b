/* Pieces the benches share: a free port, a random TRON address, the native HMAC signature. */
import { createHmac, randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { createBase58check } from '@scure/base'
import { sha256 } from '@noble/hashes/sha2'

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

export function tronAddress(): string {
  return createBase58check(sha256).encode(Uint8Array.from([0x41, ...randomBytes(20)]))
}

/** The native signature: HMAC-SHA256 of the sorted name=value pairs joined by &. */
export function nativeSign(params: Record<string, string | number>, secret: string): string {
  const message = Object.keys(params)
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('&')
  return createHmac('sha256', secret).update(message).digest('hex')
}
