/** Reading the console's and the plugins' text catalogues (the JSON files under lang/<locale>/). */

/** A JSON catalogue file's texts, nested keys flattened with dots. */
export function flattenTexts(value: unknown, prefix = ''): Record<string, string> {
  if (typeof value !== 'object' || value === null) return { [prefix]: String(value) }
  const flat: Record<string, string> = {}
  for (const [key, inner] of Object.entries(value))
    Object.assign(flat, flattenTexts(inner, prefix ? `${prefix}.${key}` : key))
  return flat
}

/** The ICU arguments a text takes, sorted: `{name}`, and `{count, plural, …}`'s `count`. */
export function argumentsOf(text: string): string[] {
  return [...new Set([...text.matchAll(/\{\s*(\w+)\s*[,}]/g)].map((match) => match[1]))].sort()
}
