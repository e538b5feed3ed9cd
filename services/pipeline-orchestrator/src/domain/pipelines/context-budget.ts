/**
 * How much execution context a CONFIG prompt may carry for a model (docs/decisions/0054). The
 * model profile (spec 2.1) states no context window, so it is looked up by the profile's
 * `model_name` in the families below; an unknown name (a private model, an enterprise gateway's
 * alias) gets a small window, so the context still fits a model that takes little.
 */
export const CONTEXT_BUDGET_RULES = {
  /** Characters per token, on the low side: JSON (PackData, declarations) tokenizes densely. */
  charsPerToken: 3,
  /** The context's share of the window: the rest is for the system and processor prompts, the declaration and the reply. */
  share: 0.25,
  /** The most any model gets, whatever its window: every character is paid for on every retrigger. */
  maxCharacters: 48_000,
  /** The window assumed for a model name not in KNOWN_WINDOWS (tokens). */
  defaultWindowTokens: 8_192,
} as const;

/** Context windows (tokens) by model-name prefix, first match wins (more specific first). */
const KNOWN_WINDOWS: readonly (readonly [string, number])[] = [
  ['gpt-4.1', 1_047_576],
  ['gpt-5', 400_000],
  ['gpt-4o', 128_000],
  ['gpt-4-turbo', 128_000],
  ['gpt-4', 8_192],
  ['gpt-3.5-turbo', 16_385],
  ['o1', 200_000],
  ['o3', 200_000],
  ['o4', 200_000],
  ['claude', 200_000],
  ['gemini', 1_048_576],
  ['mistral-large', 128_000],
  ['llama-3.1', 128_000],
  ['llama3.1', 128_000],
];

export interface ContextBudget {
  /** The most characters the execution context's text may have. */
  characters: number;
  /** The model's context window in tokens, known or assumed. */
  window_tokens: number;
  /** false: the model name is not in the known families and the default window is assumed. */
  window_known: boolean;
}

export function contextBudget(modelName: string | null): ContextBudget {
  const name = (modelName ?? '').trim().toLowerCase();
  const known = KNOWN_WINDOWS.find(([prefix]) => name.startsWith(prefix));
  const window = known?.[1] ?? CONTEXT_BUDGET_RULES.defaultWindowTokens;
  const { charsPerToken, share, maxCharacters } = CONTEXT_BUDGET_RULES;
  return {
    characters: Math.min(maxCharacters, Math.floor(window * share * charsPerToken)),
    window_tokens: window,
    window_known: known !== undefined,
  };
}
