import { createHash } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import type { EndpointMemory, RememberedEndpoint } from '#chains/rpc_pool'

/** The row key of an endpoint: a digest of its URL and API key (both may be secret). */
export function endpointKey(url: string, apiKey: string): string {
  return createHash('sha256').update(`${url}\n${apiKey}`).digest('hex')
}

type Row = {
  endpoint_key: string
  hold_until: unknown
  hold_kind: string | null
  hold_reason: string
  log_range: unknown
}

function fromRow(row: Row): RememberedEndpoint {
  const kind =
    row.hold_kind === 'rate_limited' || row.hold_kind === 'credits' ? row.hold_kind : null
  return {
    holdUntil: Number(row.hold_until) || 0,
    holdKind: kind,
    holdReason: row.hold_reason ?? '',
    logRange: row.log_range === null || row.log_range === undefined ? null : Number(row.log_range),
  }
}

/**
 * The endpoints of one chain as the database keeps them (table
 * rpc_endpoints), for one pool: read once when the pool is made, written
 * when a run learns something (a long hold, a log range). Writes are not
 * awaited by the request that learned it: a lost write only means the next
 * run learns it again.
 */
export class DatabaseEndpointMemory implements EndpointMemory {
  #known = new Map<string, RememberedEndpoint>()
  /** The last write queued for each endpoint (each waits for the one before it). */
  #tails = new Map<string, Promise<void>>()

  private constructor(
    private readonly network: string,
    private readonly apiKey: string
  ) {}

  static async load(
    network: string,
    urls: string[],
    apiKey: string
  ): Promise<DatabaseEndpointMemory> {
    const memory = new DatabaseEndpointMemory(network, apiKey)
    if (urls.length === 0) return memory
    const byKey = new Map(urls.map((url) => [endpointKey(url, apiKey), url]))
    const rows: Row[] = await db.from('rpc_endpoints').whereIn('endpoint_key', [...byKey.keys()])
    for (const row of rows) memory.#known.set(byKey.get(row.endpoint_key)!, fromRow(row))
    return memory
  }

  recall(url: string): RememberedEndpoint | null {
    return this.#known.get(url) ?? null
  }

  /**
   * Writes of one endpoint go one after the other, each with the latest
   * state: two in flight (on two connections) could land in the other
   * order and keep an older state (a range of 60 learned before 15).
   */
  remember(url: string, state: RememberedEndpoint): void {
    this.#known.set(url, state)
    const previous = this.#tails.get(url) ?? Promise.resolve()
    const write: Promise<void> = previous
      .then(() => this.#write(url, this.#known.get(url)!))
      .finally(() => {
        if (this.#tails.get(url) === write) this.#tails.delete(url)
      })
    this.#tails.set(url, write)
  }

  /** Waits for the writes under way (the end of a scan, shutdown): each endpoint's last one ends its queue. */
  async settled(): Promise<void> {
    await Promise.all([...this.#tails.values()])
  }

  async #write(url: string, state: RememberedEndpoint): Promise<void> {
    const key = endpointKey(url, this.apiKey)
    const row = {
      network: this.network,
      endpoint_key: key,
      hold_until: state.holdUntil,
      hold_kind: state.holdKind,
      hold_reason: state.holdReason.slice(0, 500),
      log_range: state.logRange,
      updated_at: Date.now(),
    }
    try {
      await db
        .connection()
        .knexQuery()
        .table('rpc_endpoints')
        .insert(row)
        .onConflict('endpoint_key')
        .merge(['network', 'hold_until', 'hold_kind', 'hold_reason', 'log_range', 'updated_at'])
    } catch (error) {
      logger.warn(
        { network: this.network, err: error },
        'what an RPC endpoint asked for could not be kept'
      )
    }
  }
}

/** The remembered state of each of a chain's endpoints (the chain page), by URL. */
export async function rememberedEndpoints(
  urls: string[],
  apiKey: string
): Promise<Map<string, RememberedEndpoint>> {
  const memory = await DatabaseEndpointMemory.load('', urls, apiKey)
  const known = new Map<string, RememberedEndpoint>()
  for (const url of urls) {
    const state = memory.recall(url)
    if (state) known.set(url, state)
  }
  return known
}
