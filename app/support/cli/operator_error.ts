/**
 * The ICU arguments of a refusal's text: values (networks, addresses,
 * pids, amounts, names), never translated. Numbers are shown as written
 * (no grouping): the English message has them so.
 */
export type RefusalArgs = Record<string, string | number>

/**
 * A plugin's own words inside a refusal (its `{reason}`): a full key of
 * the plugin's texts (`plugins.<name>.admin.refusals.<key>`) and its
 * arguments, whose English text is the reason as the plugin wrote it.
 */
export type ReasonText = { key: string; args?: RefusalArgs }

/**
 * A refusal's text in the console's catalogue: `admin.refusals.<key>` with
 * its arguments; `reason`, when a plugin gave its reason in its own texts.
 */
export type Refusal = { key: string; args?: RefusalArgs; reason?: ReasonText }

/**
 * A refusal of an operator action: shown to the operator as is. The
 * message is English (the ace commands and the logs print it); a keyed
 * refusal is also in the console's catalogue (resources/lang/<locale>/admin/
 * refusals.json), whose English text formats to this very message, so that
 * the console can say it in the admin's language (app/admin/refusal_text.ts).
 */
export class OperatorError extends Error {
  /** The catalogue key under `admin.refusals.`, when the refusal has one. */
  readonly key?: string
  readonly args: RefusalArgs
  /** The plugin's reason in its own texts (the `reason` argument), when it gave one. */
  readonly reason?: ReasonText

  constructor(message: string, refusal?: Refusal) {
    super(message)
    this.key = refusal?.key
    this.args = refusal?.args ?? {}
    this.reason = refusal?.reason
  }

  /** The refusal as its key and arguments (to keep it, e.g. a line of an import), or null. */
  get refusal(): Refusal | null {
    if (this.key === undefined) return null
    return { key: this.key, args: this.args, ...(this.reason ? { reason: this.reason } : {}) }
  }
}
