/**
 * TON account addresses, read and written without @ton/core: what a web
 * process needs (checking a wallet the admin enters, the form a payer is
 * shown) is a base64 string, a tag byte and a CRC-16, and @ton/core with
 * its cell and crypto modules costs every web process a few MB
 * (docs/production.md, "Memory"). The scanners and the reference checks,
 * loaded on first use, keep @ton/core; tests/unit/ton_address.spec.ts checks
 * this module against it.
 *
 * Forms (TON documentation, "Smart contract addresses"):
 * - raw: `<workchain>:<64 hex>`;
 * - user-friendly: 36 bytes in base64 or base64url (48 characters): a tag
 *   (0x11 bounceable, 0x51 non-bounceable, plus 0x80 for test-only), the
 *   workchain as a signed byte, the 32-byte account id, and a CRC-16/XMODEM
 *   of those 34 bytes, big-endian.
 *
 * Only the base chain (0) and the masterchain (-1) exist; an address of any
 * other workchain could not receive a payment and is refused.
 */

/** Structurally the same fields as @ton/core's Address, so either can be passed where this is asked. */
export type TonAddress = { readonly workChain: number; readonly hash: Buffer }

export type ParsedTonAddress = { address: TonAddress; bounceable: boolean; testOnly: boolean }

const BOUNCEABLE = 0x11
const NON_BOUNCEABLE = 0x51
const TEST_ONLY = 0x80
const WORKCHAINS = new Set([0, -1])
const RAW = /^(-?\d+):([0-9a-fA-F]{64})$/
const FRIENDLY = /^[A-Za-z0-9+/_-]{48}$/

/** CRC-16/XMODEM (polynomial 0x1021, initial 0), as user-friendly addresses carry it. */
function crc16(bytes: Uint8Array): number {
  let crc = 0
  for (const byte of bytes) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    }
  }
  return crc
}

/** The address in either form, or null when the text is not a TON address. */
export function parseTonAddress(text: string): ParsedTonAddress | null {
  const raw = RAW.exec(text)
  if (raw) {
    const workChain = Number(raw[1])
    if (!WORKCHAINS.has(workChain)) return null
    return {
      address: { workChain, hash: Buffer.from(raw[2], 'hex') },
      bounceable: true,
      testOnly: false,
    }
  }
  if (!FRIENDLY.test(text)) return null
  const bytes = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
  if (bytes.length !== 36) return null
  if (crc16(bytes.subarray(0, 34)) !== bytes.readUInt16BE(34)) return null
  const testOnly = (bytes[0] & TEST_ONLY) !== 0
  const tag = bytes[0] & ~TEST_ONLY
  if (tag !== BOUNCEABLE && tag !== NON_BOUNCEABLE) return null
  const workChain = bytes.readInt8(1)
  if (!WORKCHAINS.has(workChain)) return null
  return {
    address: { workChain, hash: Buffer.from(bytes.subarray(2, 34)) },
    bounceable: tag === BOUNCEABLE,
    testOnly,
  }
}

/** The user-friendly form (base64url unless `urlSafe` is false). */
export function friendlyTonAddress(
  address: TonAddress,
  options: { bounceable: boolean; testOnly: boolean; urlSafe?: boolean }
): string {
  const bytes = Buffer.alloc(36)
  bytes[0] = (options.bounceable ? BOUNCEABLE : NON_BOUNCEABLE) | (options.testOnly ? TEST_ONLY : 0)
  bytes.writeInt8(address.workChain, 1)
  address.hash.copy(bytes, 2, 0, 32)
  bytes.writeUInt16BE(crc16(bytes.subarray(0, 34)), 34)
  const base64 = bytes.toString('base64')
  return options.urlSafe === false ? base64 : base64.replace(/\+/g, '-').replace(/\//g, '_')
}

/** The raw form, `<workchain>:<64 lower-case hex>`. */
export function rawTonAddress(address: TonAddress): string {
  return `${address.workChain}:${address.hash.toString('hex')}`
}

/** Whether two addresses name the same account (flags aside). */
export function sameTonAddress(a: TonAddress, b: TonAddress): boolean {
  return a.workChain === b.workChain && a.hash.equals(b.hash)
}
