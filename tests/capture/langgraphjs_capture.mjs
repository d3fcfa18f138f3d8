// What the LangGraph.js capture scripts share: chat models that count their calls per agent, and the loop that
// serves each scenario's request in a `handle_request` span and records its request run. The framework's
// classes are passed in (this file sits outside each script's node_modules).

/** A ChatOpenAI on the scripted model (one retry) whose every call counts for `agent` in `calls`. */
export function countingModel(ChatOpenAI, calls, agent) {
  return new ChatOpenAI({
    model: 'gpt-4o-mini',
    maxRetries: 1,
    configuration: { baseURL: process.env.OPENAI_BASE_URL },
    callbacks: [{ handleChatModelStart: () => calls.set(agent, (calls.get(agent) ?? 0) + 1) }],
  });
}

/**
 * Capture each scenario: `begin(scenario, run)` sees it start, `invoke(request)` runs the graph and returns its
 * final state (throwing when the request failed), `handoffs(run, messages)` gives the request's handoffs from
 * those the tools recorded and the final messages.
 */
export async function captureRequests({ Scenario, scenarios, graphName, tracer, provider, calls, begin, invoke, handoffs }) {
  for (const [name, [request, replies]] of Object.entries(scenarios)) {
    const s = await new Scenario(name, replies).begin();
    await tracer.startActiveSpan('handle_request', async (span) => {
      const run = s.run(graphName, request);
      Object.assign(run, { handoffs: [], nested_runs_allowed: true });
      begin(s, run);
      calls.clear();
      const count = () => [...calls.values()].reduce((a, b) => a + b, 0);
      try {
        const { messages } = await invoke(request);
        run.handoffs = handoffs(run, messages);
        s.finish(messages.at(-1).content, 'ok', count());
      } catch (err) {
        console.log(`   request failed as scripted: ${err.name}: ${err.message}`);
        s.finish(null, 'error', count());
      }
      run.note = `Model calls per agent: ${JSON.stringify(Object.fromEntries(calls))}.`;
      span.end();
    });
    await provider.forceFlush();
    await s.end({ nested_runs_allowed: true });
  }
  await provider.shutdown();
}
