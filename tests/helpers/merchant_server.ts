import { HttpStub } from '#tests/helpers/http_stub'

/**
 * A merchant's callback endpoint: records every request and answers with
 * the scripted replies in turn (the last one repeats).
 */
export class MerchantServer extends HttpStub {
  replies: { status: number; body: string; delayMs?: number; headers?: Record<string, string> }[] = [{ status: 200, body: 'success' }]
  #served = 0

  constructor() {
    super()
    this.handler = (_request, response) => {
      const reply = this.replies[Math.min(this.#served, this.replies.length - 1)]
      this.#served++
      setTimeout(() => {
        response.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers })
        response.end(reply.body)
      }, reply.delayMs ?? 0)
    }
  }

  reset(replies: MerchantServer['replies'] = [{ status: 200, body: 'success' }]) {
    this.replies = replies
    this.requests = []
    this.#served = 0
  }

  get notifyUrl() {
    return `${this.url}/notify`
  }
}
