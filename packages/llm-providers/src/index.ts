export * from './types';
export * from './errors';
export { Redactor, MIN_FRAGMENT, jsonValues } from './redact';
export { createAdapter, secretsOf } from './adapter';
export { TokenCache } from './token-cache';
export { GEMINI_DEFAULT_BASE_URL } from './vendor3';
export { costOf, sumCosts, isUnpriced, type Cost, type Prices, type Price, type Unpriced } from './cost';
export {
  generateStructured,
  schemaProblem,
  StructuredOutputError,
  MAX_STRUCTURED_ATTEMPTS,
  type StructuredResult,
} from './structured';
export { STRUCTURED_CAPABILITY, toGeminiSchema } from './schema-plan';
export { extractJson } from './extract-json';
