import type Chain from '#models/chain'
import chainRegistry from '#chains/chain_registry'
import { OperatorError } from '#support/cli/operator_error'

/** What stands for the transaction in a chain's explorer template. */
export const TX_PLACEHOLDER = '{tx}'

/**
 * Why a template cannot be an explorer link, or null when it can: '' (no
 * link), or an http(s) URL holding `{tx}`.
 */
export function explorerTemplateProblem(template: string): OperatorError | null {
  if (template === '') return null
  if (template.length > 500)
    return new OperatorError('The explorer URL template is longer than 500 characters', {
      key: 'explorer_template_too_long',
    })
  if (!template.includes(TX_PLACEHOLDER)) {
    return new OperatorError(
      `The explorer URL template must contain ${TX_PLACEHOLDER} where the transaction goes, ` +
        `e.g. https://etherscan.io/tx/${TX_PLACEHOLDER}`,
      { key: 'explorer_template_no_placeholder', args: { placeholder: TX_PLACEHOLDER } }
    )
  }
  let parsed: URL
  try {
    parsed = new URL(template.replaceAll(TX_PLACEHOLDER, 'tx'))
  } catch {
    return new OperatorError(`"${template}" is not a URL`, {
      key: 'not_a_url',
      args: { url: template },
    })
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return new OperatorError(`"${template}" must be an http(s) URL`, {
      key: 'explorer_template_scheme',
      args: { url: template },
    })
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
