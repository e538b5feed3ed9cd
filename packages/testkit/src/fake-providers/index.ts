export * from './server';
export * from './by-prompt';
export { startFakeOpenAi, openAiError, chatCompletion } from './openai';
export { startFakeAnthropic, anthropicError } from './anthropic';
export { startFakeGemini, geminiError, generateContentResponse } from './gemini';
export { startFakeGenai } from './genai';
export { FAKE_ASSISTANT_MODEL, startFakeAssistants, type RunScript } from './assistant';
