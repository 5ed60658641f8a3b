import type Chain from '#models/chain'
import chainRegistry from '#chains/chain_registry'

/** What stands for the transaction in a chain's explorer template. */
export const TX_PLACEHOLDER = '{tx}'

/**
 * Why a template cannot be an explorer link, or null when it can: '' (no
 * link), or an http(s) URL holding `{tx}`.
 */
export function explorerTemplateProblem(template: string): string | null {
  if (template === '') return null
  if (template.length > 500) return 'The explorer URL template is longer than 500 characters'
  if (!template.includes(TX_PLACEHOLDER)) {
    return (
      `The explorer URL template must contain ${TX_PLACEHOLDER} where the transaction goes, ` +
      `e.g. https://etherscan.io/tx/${TX_PLACEHOLDER}`
    )
  }
  let parsed: URL
  try {
    parsed = new URL(template.replaceAll(TX_PLACEHOLDER, 'tx'))
  } catch {
    return `"${template}" is not a URL`
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `"${template}" must be an http(s) URL`
  return null
}

/**
 * The explorer page of a transaction of `chain` ('' when the chain has no
 * template). The family may give explorers another form of the reference
 * (e.g. only the hash part of a composite reference).
 */
export function explorerUrl(chain: Chain | null, reference: string): string {
  if (!chain || !chain.explorerTxUrl || !reference) return ''
  const family = chainRegistry.find(chain.family)
  const shown = family?.explorerReference ? family.explorerReference(reference) : reference
  return chain.explorerTxUrl.replaceAll(TX_PLACEHOLDER, encodeURIComponent(shown))
}
