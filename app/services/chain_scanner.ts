import Chain from '#models/chain'
import chainRegistry from '#chains/chain_registry'

export type ScanReport = { network: string; scanned: boolean; detail: string }

/**
 * Runs the chain watchers. A family scans once its plugin implements
 * scanning; until then chains are reported as not scannable.
 */
export class ChainScanner {
  async scan(options: { network?: string } = {}): Promise<ScanReport[]> {
    const query = Chain.query().where('enabled', true).orderBy('sort_order')
    if (options.network) query.where('network', options.network.toLowerCase())
    const chains = await query
    return chains.map((chain) => {
      const family = chainRegistry.has(chain.family) ? chainRegistry.family(chain.family) : null
      const scannable = family !== null && 'scan' in family
      return {
        network: chain.network,
        scanned: false,
        detail: scannable ? 'not due' : `scanning is not available for the ${chain.family} family yet`,
      }
    })
  }

  /** Scheduler entry: scans the chains whose interval has elapsed. */
  async runDue(): Promise<ScanReport[]> {
    return []
  }
}

const chainScanner = new ChainScanner()
export default chainScanner
