import { Exception } from '@adonisjs/core/exceptions'
import { DEFAULT_MESSAGES, ErrorCode, type ErrorCodeValue } from '#exceptions/error_codes'

/**
 * A refusal the merchant or payer can act on. Rendered by the exception
 * handler as the envelope `{status_code: code, message, data, request_id}`
 * with HTTP 401 for signature errors and 400 otherwise.
 */
export default class BusinessError extends Exception {
  readonly code: string
  readonly businessCode: ErrorCodeValue
  readonly data: unknown

  constructor(businessCode: ErrorCodeValue, message?: string, data: unknown = null) {
    const status = businessCode === ErrorCode.SIGNATURE ? 401 : 400
    super(message ?? DEFAULT_MESSAGES[businessCode], { status })
    this.code = `E_BUSINESS_${businessCode}`
    this.businessCode = businessCode
    this.data = data
  }

  /** General parameter/validation error (400). */
  static parameter(message: string, data: unknown = null) {
    return new BusinessError(ErrorCode.PARAMETER, message, data)
  }

  static signature(message?: string) {
    return new BusinessError(ErrorCode.SIGNATURE, message)
  }
}
