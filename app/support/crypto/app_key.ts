import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

/**
 * Returns the APP_KEY kept in `storage/app_key`, creating it (0600) on the
 * first run. Used only when APP_KEY is not given by the environment.
 */
export function loadOrCreateAppKey(appRoot: URL): string {
  const storage = join(fileURLToPath(appRoot), 'storage')
  const file = join(storage, 'app_key')
  if (existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim()
    if (key.length >= 32) return key
  }
  mkdirSync(storage, { recursive: true })
  const key = randomBytes(32).toString('base64url')
  try {
    // 'wx' fails if another process created the file first: theirs wins.
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' })
    return key
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    return readFileSync(file, 'utf8').trim()
  }
}
