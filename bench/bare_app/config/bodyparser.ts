import { defineConfig } from '@adonisjs/core/bodyparser'

export default defineConfig({
  allowedMethods: ['POST'],
  json: { limit: '64kb', strict: true, types: ['application/json'] },
  form: { limit: '64kb', types: ['application/x-www-form-urlencoded'] },
  raw: { limit: '64kb', types: ['text/*'] },
  multipart: {
    autoProcess: false,
    processManually: [],
    limit: '1mb',
    types: ['multipart/form-data'],
  },
})
