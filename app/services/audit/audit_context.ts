import { AsyncLocalStorage } from 'node:async_hooks'
import { userInfo } from 'node:os'

/** Who made a change: a console user, an operator at the shell, or the gateway itself. */
export type AuditActor =
  | { kind: 'user'; userId: number; email: string }
  | { kind: 'ace'; osUser: string }
  | { kind: 'system' }
  /** Someone not signed in (a failed console sign-in): the row's IP says from where. */
  | { kind: 'visitor' }

export type AuditContext = { actor: AuditActor; ip?: string | null; requestId?: string | null }

const SYSTEM: AuditContext = { actor: { kind: 'system' } }
const storage = new AsyncLocalStorage<AuditContext>()

/**
 * Runs `work` with `context` as the author of every audited change made
 * inside it (the ace commands' base and, later, the console's middleware
 * set it once): services resolve it, callers never pass it around.
 */
export function actingAs<T>(context: AuditContext, work: () => T): T {
  return storage.run(context, work)
}

/** The context of the running change; outside any, the gateway itself (`system`). */
export function currentAuditContext(): AuditContext {
  return storage.getStore() ?? SYSTEM
}

/** The operator at the shell: the OS account running `node ace`. */
export function aceActor(): AuditActor {
  let name: string
  try {
    name = userInfo().username
  } catch {
    // No passwd entry (some containers): the environment still names the account.
    name = process.env.USER ?? process.env.LOGNAME ?? 'unknown'
  }
  return { kind: 'ace', osUser: name }
}

/** How an actor is written in the log: the e-mail, `ace:<os user>` or `system`. */
export function actorLabel(actor: AuditActor): string {
  if (actor.kind === 'user') return actor.email
  if (actor.kind === 'ace') return `ace:${actor.osUser}`
  if (actor.kind === 'visitor') return 'anonymous'
  return 'system'
}
