/**
 * A Mastra agent network (`agent.network()`): the routing agent `claims_network` picks, step by step, one of two
 * agents (`cover_agent` with lookup_policy and file_claim, `payout_agent` with issue_payout) or a tool of its own
 * (delete_account) with a structured decision, runs it, and checks with another structured call whether the task is
 * complete, writing the final result. Memory (required by networks) is `@mastra/memory` on an in-memory store.
 * Traced by Mastra's own observability (`@mastra/observability`) exporting through `@mastra/otel-exporter` (custom
 * provider, OTLP/HTTP protobuf) with `includeInternalSpans: true`. The tools are those of insurance.mjs; the model is an `@ai-sdk/openai-compatible`
 * chat model at OPENAI_BASE_URL.
 *
 * The ground truth is one request run per request, entered at claims_network: the user's request, the network's
 * final result (none when it failed), every model call (the router's decisions and completion checks, the agents'
 * calls; counted on each agent's model) and tool call (recorded by the tools, the network's own tool included); the
 * router running an agent is a handoff from claims_network to it, not a tool call. What the trace shows: the network's
 * workflow (`agent-loop-main-workflow`, its routing, agent-execution and tool-execution steps) in one trace, each agent
 * the router runs in a trace of its own (its invocation is a root span), and no model span for the router's decisions
 * and completion checks: every run lacks `llm_calls`.
 */
import path from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { Memory } from '@mastra/memory';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { z } from 'zod';

const { Scenario, text, tool, failure } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'client.mjs'));
const { countedChatModel } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'model_calls.mjs'));
const { claimsTools } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'insurance.mjs'));

process.env.MASTRA_TELEMETRY_DISABLED = '1'; // no product analytics calls from new Mastra()

let s; // the scenario being captured
const calls = []; // the agent behind each model call of the current request, in order
const countedModel = (agentName) => countedChatModel(createOpenAICompatible, () => calls.push(agentName));

// insurance.mjs's tools, declared as Mastra tools
const asMastraTool = (execute, { name, description, schema }) => createTool({ id: name, description, inputSchema: schema, execute });
const tools = claimsTools({ tool: asMastraTool, z, scenario: () => s });

const coverAgent = new Agent({
  id: 'cover_agent',
  name: 'cover_agent',
  description: 'Reads insurance policies and files claims on them.',
  instructions: 'You read insurance policies and file claims on them.',
  model: countedModel('cover_agent'),
  tools: { lookup_policy: tools.lookup_policy, file_claim: tools.file_claim },
});
const payoutAgent = new Agent({
  id: 'payout_agent',
  name: 'payout_agent',
  description: 'Pays settled claims out.',
  instructions: 'You pay settled claims out.',
  model: countedModel('payout_agent'),
  tools: { issue_payout: tools.issue_payout },
});
const claimsNetwork = new Agent({
  id: 'claims_network',
  name: 'claims_network',
  instructions: 'You route insurance customers to the agent or tool that settles their request.',
  model: countedModel('claims_network'),
  agents: { cover_agent: coverAgent, payout_agent: payoutAgent },
  tools: { delete_account: tools.delete_account },
  memory: new Memory({ storage: new InMemoryStore() }),
});

const exporter = new OtelExporter({
  provider: { custom: { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, protocol: 'http/protobuf' } },
  signals: { logs: false }, // Mastra's own log lines, not agent content
});
const mastra = new Mastra({
  agents: { claims_network: claimsNetwork, cover_agent: coverAgent, payout_agent: payoutAgent },
  // The network's router, its decisions and the tools it runs are spans Mastra marks internal: without this switch
  // the trace holds only each agent's own invocation, and a request the router settles with a tool has no span at all.
  observability: new Observability({
    configs: { otel: { serviceName: 'claims-service', exporters: [exporter], includeInternalSpans: true } },
  }),
});

/** One request through the network; the ground truth is what the network run returned. */
async function serve(name, prompt, handedTo) {
  const run = s.run('claims_network', prompt);
  calls.length = 0;
  let output = null;
  let status = 'error';
  try {
    const stream = await mastra.getAgent('claims_network').network(prompt, { memory: { thread: `thread-${name}`, resource: 'claims-desk' } });
    for await (const _ of stream) { /* drain */ }
    status = (await stream.status) === 'success' ? 'ok' : 'error';
    const result = await stream.result;
    if (status === 'ok') output = result?.result?.result ?? null;
    else console.log(`   network ${await stream.status}: ${result?.error?.message ?? result?.error ?? ''}`);
  } catch (err) {
    console.log(`   network failed: ${err?.message ?? err}`);
  }
  s.finish(output, status, calls.length, ['llm_calls']);
  Object.assign(run, {
    handoffs: handedTo.map((to) => ({ from: 'claims_network', to })),
    nested_runs_allowed: true,
    note: `The request run is the network's (the agents it runs are traced apart, in traces of their own), with the router's and the agents' model calls and every tool call; the router running an agent is a handoff. Model calls, by whom: ${JSON.stringify(calls)}.`,
  });
}

const route = (primitiveId, primitiveType, prompt) =>
  text(JSON.stringify({ primitiveId, primitiveType, prompt, selectionReason: `${primitiveId} settles this request.` }));
const done = (finalResult) =>
  text(JSON.stringify({ isComplete: true, completionReason: 'The request is settled.', finalResult }));

const SCENARIOS = [
  ['claim_filed', 'Storm damage on policy PX-1: file a claim for 900 EUR.', ['cover_agent'], [
    route('cover_agent', 'agent', 'Read policy PX-1 and file a claim of 900 EUR on it.'),
    tool('lookup_policy', { policy_id: 'PX-1' }),
    tool('file_claim', { policy_id: 'PX-1', amount: 900 }),
    text('PX-1 is home cover (excess 150 EUR); claim C-1 for 900 EUR is filed.'),
    done('Your policy PX-1 is home cover with a 150 EUR excess, and claim C-1 for 900 EUR is filed.'),
  ]],
  ['account_closed', 'Close my account, customer c-7310.', [], [
    route('delete_account', 'tool', JSON.stringify({ user_id: 'c-7310' })),
    done('Your account c-7310 is closed.'),
  ]],
  ['payout_refused', 'Pay out my settled claim: 750 EUR.', ['payout_agent'], [
    route('payout_agent', 'agent', 'Pay out 750 EUR on the settled claim.'),
    tool('issue_payout', { amount: 750 }),
    text('The 750 EUR payout failed: the payout limit is exceeded.'),
    done('Sorry, the 750 EUR payout could not be made: it exceeds the payout limit.'),
  ]],
  ['agent_failure', 'File a claim of 300 EUR on policy PX-2.', ['cover_agent'], [
    route('cover_agent', 'agent', 'File a claim of 300 EUR on policy PX-2.'),
    failure(500, 'model backend unavailable'),
  ]],
];

for (const [name, prompt, handedTo, replies] of SCENARIOS) {
  s = await new Scenario(name, replies).begin();
  await serve(name, prompt, handedTo);
  await mastra.observability.getDefaultInstance().flush();
  await s.end({ nested_runs_allowed: true, settle: 2 });
}
await mastra.shutdown?.();
process.exit(0);
