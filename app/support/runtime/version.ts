import { readFileSync } from 'node:fs'

/** The service version label: `version` of package.json, read once. */
export const SERVICE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version: string
  }
).version
