// Model calls counted for Node capture scripts on the AI SDK: the scripted chat model (an `@ai-sdk/openai-compatible`
// provider the script passes in, as each capture pins its own), telling `onCall` of each call an agent makes.

/** The scripted chat model at OPENAI_BASE_URL; `onCall()` runs once per model call (doGenerate / doStream). */
export function countedChatModel(createOpenAICompatible, onCall) {
  const model = createOpenAICompatible({
    name: 'openai',
    baseURL: process.env.OPENAI_BASE_URL,
    apiKey: process.env.OPENAI_API_KEY,
    includeUsage: true,
  }).chatModel('gpt-4o-mini');
  return new Proxy(model, {
    get(target, prop) {
      if (prop === 'doGenerate' || prop === 'doStream') return (...args) => { onCall(); return target[prop](...args); };
      const value = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
