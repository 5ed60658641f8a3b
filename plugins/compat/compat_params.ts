import type { HttpContext } from '@adonisjs/core/http'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import { readFlatParams } from '#support/http/request_params'

/** One parameter as it came: the bytes that were signed, and their text. */
type CompatParam = { bytes: Buffer; text: string }

const unparsable = (reason: string) =>
  new BusinessError(ErrorCode.UNPARSABLE, `Parameters cannot be parsed: ${reason}`)

const utf8 = new TextDecoder('utf-8', { fatal: true })
/** GB18030, the superset of GBK (and GB2312) that browsers decode "gbk" as. */
const gbk = new TextDecoder('gb18030')

/**
 * The text of a value: UTF-8 when its bytes are UTF-8, else GBK. EPay shops
 * on GBK pages (older PHP shops, their forms and http_build_query) send
 * GBK bytes, signed as bytes; the same text in UTF-8 signs differently.
 */
function textOf(bytes: Buffer): string {
  try {
    return utf8.decode(bytes)
  } catch {
    return gbk.decode(bytes)
  }
}

const HEX = /^[0-9A-Fa-f]{2}$/

/**
 * Form decoding to bytes (PHP's urldecode): `+` is a space, `%XY` a byte,
 * a `%` that starts no escape stays as it is, any other character its
 * UTF-8 bytes.
 */
function decodeBytes(part: string): Buffer {
  const bytes: number[] = []
  for (let index = 0; index < part.length; index++) {
    const char = part[index]
    if (char === '+') {
      bytes.push(0x20)
    } else if (char === '%' && HEX.test(part.slice(index + 1, index + 3))) {
      bytes.push(Number.parseInt(part.slice(index + 1, index + 3), 16))
      index += 2
    } else {
      const code = part.codePointAt(index)!
      if (code > 0xffff) index++
      bytes.push(...Buffer.from(String.fromCodePoint(code), 'utf8'))
    }
  }
  return Buffer.from(bytes)
}

function fromUrlEncoded(text: string): Map<string, CompatParam> {
  const params = new Map<string, CompatParam>()
  for (const pair of text.split('&')) {
    if (pair === '') continue
    const equals = pair.indexOf('=')
    const name = textOf(decodeBytes(equals === -1 ? pair : pair.slice(0, equals)))
    const bytes = decodeBytes(equals === -1 ? '' : pair.slice(equals + 1))
    if (params.has(name)) throw unparsable(`"${name}" is given more than once`)
    params.set(name, { bytes, text: textOf(bytes) })
  }
  return params
}

/**
 * The parameters of a compat request (submit.php, mapi.php, api.php) with
 * the bytes of each value, so that the MD5 sign is checked on what the
 * shop signed whatever its charset:
 * - GET: the query string;
 * - POST: the query string's parameters, overridden by the body's
 *   (EPay's SDK posts its refund to `api.php?act=refund` with the rest
 *   in the body); a form body is read as bytes, a JSON body as text.
 * A name given twice in one of them is refused (10009).
 */
export class CompatParams {
  private constructor(private readonly params: Map<string, CompatParam>) {}

  static read(ctx: HttpContext): CompatParams {
    const { request } = ctx
    const query = fromUrlEncoded(request.parsedUrl.query ?? '')
    if (request.method() === 'GET' || request.method() === 'HEAD') return new CompatParams(query)

    let body: Map<string, CompatParam>
    if (request.is(['urlencoded']) !== null) {
      body = fromUrlEncoded(request.raw() ?? '')
    } else {
      body = new Map()
      for (const [name, value] of Object.entries(readFlatParams(ctx))) {
        if (value !== null) body.set(name, { bytes: Buffer.from(value, 'utf8'), text: value })
      }
    }
    return new CompatParams(new Map([...query, ...body]))
  }

  /** The text of a parameter; undefined when it was not sent. */
  text(name: string): string | undefined {
    return this.params.get(name)?.text
  }

  /** Every parameter as text, empty ones included (validators drop those). */
  texts(): Record<string, string> {
    return Object.fromEntries([...this.params].map(([name, param]) => [name, param.text]))
  }

  /** Every parameter's bytes, as the MD5 sign covers them. */
  signable(): Record<string, Buffer> {
    return Object.fromEntries([...this.params].map(([name, param]) => [name, param.bytes]))
  }
}
