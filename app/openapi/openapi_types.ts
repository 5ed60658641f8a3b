/**
 * The parts of OpenAPI 3.1 that the gateway's document uses, typed, so
 * that a misspelt field of the document is a compile error rather than a
 * silently ignored key. Schema Objects are JSON Schema 2020-12 (the OAS 3.1
 * default dialect).
 */

export type JsonValue =
  string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

/** A JSON Schema 2020-12 schema, as far as the document needs it. */
export type SchemaObject = {
  $ref?: string
  title?: string
  description?: string
  type?: JsonType | JsonType[]
  const?: JsonValue
  enum?: JsonValue[]
  format?: string
  pattern?: string
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  exclusiveMaximum?: number
  minItems?: number
  items?: SchemaObject
  properties?: Record<string, SchemaObject>
  required?: string[]
  additionalProperties?: boolean | SchemaObject
  dependentRequired?: Record<string, string[]>
  allOf?: SchemaObject[]
  anyOf?: SchemaObject[]
  oneOf?: SchemaObject[]
  not?: SchemaObject
  examples?: JsonValue[]
  default?: JsonValue
  contentMediaType?: string
}

export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null'

export type Reference = { $ref: string; summary?: string; description?: string }

export type ServerObject = { url: string; description?: string }

export type InfoObject = {
  title: string
  version: string
  summary?: string
  description?: string
  license?: { name: string; identifier?: string; url?: string }
}

export type TagObject = { name: string; description?: string }

export type ParameterObject = {
  name: string
  in: 'path' | 'query' | 'header' | 'cookie'
  description?: string
  required?: boolean
  schema: SchemaObject
  example?: JsonValue
}

export type HeaderObject = {
  description?: string
  required?: boolean
  schema: SchemaObject
}

export type MediaTypeObject = {
  schema: SchemaObject
  example?: JsonValue
}

export type RequestBodyObject = {
  description?: string
  required?: boolean
  content: Record<string, MediaTypeObject>
}

export type ResponseObject = {
  description: string
  headers?: Record<string, HeaderObject | Reference>
  content?: Record<string, MediaTypeObject>
}

export type OperationObject = {
  operationId: string
  summary: string
  description?: string
  tags?: string[]
  parameters?: (ParameterObject | Reference)[]
  requestBody?: RequestBodyObject | Reference
  responses: Record<string, ResponseObject | Reference>
  security?: Record<string, string[]>[]
}

export type HttpMethod = 'get' | 'post'

export type PathItemObject = {
  summary?: string
  description?: string
  parameters?: (ParameterObject | Reference)[]
} & Partial<Record<HttpMethod, OperationObject>>

export type ComponentsObject = {
  schemas?: Record<string, SchemaObject>
  responses?: Record<string, ResponseObject>
  parameters?: Record<string, ParameterObject>
  headers?: Record<string, HeaderObject>
}

export type OpenApiDocument = {
  openapi: '3.1.0'
  info: InfoObject
  servers: ServerObject[]
  tags?: TagObject[]
  paths: Record<string, PathItemObject>
  webhooks?: Record<string, PathItemObject>
  components: ComponentsObject
}
