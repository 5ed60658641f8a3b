import { HttpStub } from '#tests/helpers/http_stub'

/**
 * A merchant's callback endpoint: records every request and answers with
 * the scripted replies in turn (the last one repeats).
 *
 * `hold()` keeps the answers back until `release()` (a merchant that hangs
 * for as long as the test wants, whatever the machine's speed); each
 * reply's `delayMs` still counts from the release.
 */
export class MerchantServer extends HttpStub {
  replies: { status: number; body: string; delayMs?: number; headers?: Record<string, string> }[] =
    [{ status: 200, body: 'success' }]
  #served = 0
  #holding = false
  #held: (() => void)[] = []

  constructor() {
    super()
    this.handler = (_request, response) => {
      const reply = this.replies[Math.min(this.#served, this.replies.length - 1)]
      this.#served++
      const answer = () =>
        setTimeout(() => {
          if (response.destroyed) return // the client gave up (its timeout) while the answer was held
          response.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers })
          response.end(reply.body)
        }, reply.delayMs ?? 0)
      if (this.#holding) this.#held.push(answer)
      else answer()
    }
  }

  /** Answers wait from now on, until release(). */
  hold() {
    this.#holding = true
  }

  /** Sends the answers held so far; later requests are answered at once (until the next hold()). */
  release() {
    this.#holding = false
    for (const answer of this.#held.splice(0)) answer()
  }

  /** Requests whose answer is being held. */
  get heldCount() {
    return this.#held.length
  }

  reset(replies: MerchantServer['replies'] = [{ status: 200, body: 'success' }]) {
    this.release()
    this.replies = replies
    this.requests = []
    this.#served = 0
  }

  get notifyUrl() {
    return `${this.url}/notify`
  }
}
