/**
 * A LangGraph.js swarm (`@langchain/langgraph-swarm` `createSwarm`) of three `createReactAgent` agents handing
 * control to each other, traced by OpenLLMetry JS (`@traceloop/node-server-sdk`, whose LangChain instrumentation
 * adds its callback handler to every LangChain run), exporting OTLP/HTTP protobuf to OTEL_EXPORTER_OTLP_ENDPOINT
 * span by span (`disableBatch`). The SDK exports only its own instrumentations' spans, so each request runs in a
 * Traceloop workflow named `handle_request` (`withWorkflow`), the SDK's way to mark an application's request.
 *
 * `claims_phone_line` (no tools of its own) hands a caller to `damage_assessor` (lookup_policy, file_claim,
 * issue_payout) with `route_to_assessor`, or to `registry_clerk` (delete_account) with `refer_to_registry`; the
 * assessor can refer a caller on to the registry clerk too. Each handoff tool is a `Command` to the parent graph
 * that sets the active agent, marked with its destination so that the swarm wires it. The agent handed to answers
 * the caller; the swarm ends when an agent answers in text. The models are `ChatOpenAI` on Chat Completions
 * against OPENAI_BASE_URL (one retry).
 *
 * The ground truth is the request run of the swarm (`phone_claims_swarm`): the caller's request, the last agent's
 * answer (or the failure), every agent's model calls (a callback on each agent's model), the tool calls recorded
 * by the tools as they ran, and the handoffs, recorded by the handoff tools as they ran.
 */
import path from 'node:path';
import * as traceloop from '@traceloop/node-server-sdk';
import { ToolMessage } from '@langchain/core/messages';
import { tool as lcTool } from '@langchain/core/tools';
import { Command, getCurrentTaskInput } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { createSwarm } from '@langchain/langgraph-swarm';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

const { Scenario, text, tool, failure } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'client.mjs'));
const { claimsTools } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'insurance.mjs'));
const { captureRequests, countingModel } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'langgraphjs_capture.mjs'));

traceloop.initialize({
  appName: 'phone-claims',
  baseUrl: process.env.OTEL_EXPORTER_OTLP_ENDPOINT,
  disableBatch: true,
  traceloopSyncEnabled: false, // no prompt registry to poll
  silenceInitializationMessage: true,
});

const SWARM = 'phone_claims_swarm';
let s; // the scenario being captured
let run; // its request run
const modelCalls = new Map(); // model calls per agent in the current request
const claims = claimsTools({ tool: lcTool, z, scenario: () => s });

/** A handoff tool of the application's naming, from one agent to another, wired by its destination mark. */
function handoffTool(name, from, to, description) {
  const handoff = lcTool(async (_, config) => {
    run.handoffs.push({ from, to });
    const messages = getCurrentTaskInput().messages.concat(
      new ToolMessage({ content: `Caller routed to ${to}`, name, tool_call_id: config.toolCall.id }),
    );
    return new Command({ goto: to, graph: Command.PARENT, update: { messages, activeAgent: to } });
  }, { name, description, schema: z.object({}) });
  handoff.metadata = { __handoff_destination: to };
  return handoff;
}

function agent(name, prompt, tools) {
  const llm = countingModel(ChatOpenAI, modelCalls, name);
  return createReactAgent({ llm, tools, name, prompt });
}

const toRegistry = (from) =>
  handoffTool('refer_to_registry', from, 'registry_clerk', 'Customer records, account closures.');

const swarm = createSwarm({
  agents: [
    agent('claims_phone_line', 'You answer the claims phone line and route each caller to the right person.', [
      handoffTool('route_to_assessor', 'claims_phone_line', 'damage_assessor', 'Policies, claims and payouts.'),
      toRegistry('claims_phone_line'),
    ]),
    agent('damage_assessor', 'You assess damage: look up policies, file claims and pay them out.', [
      claims.lookup_policy, claims.file_claim, claims.issue_payout, toRegistry('damage_assessor'),
    ]),
    agent('registry_clerk', 'You keep the customer registry and close accounts.', [claims.delete_account]),
  ],
  defaultActiveAgent: 'claims_phone_line',
}).compile({ name: SWARM });

const SCENARIOS = {
  claim_routed: ['A storm broke my windows; file a 900 euro claim on policy PX-1.', [
    tool('route_to_assessor', {}),
    tool('lookup_policy', { policy_id: 'PX-1' }),
    tool('file_claim', { policy_id: 'PX-1', amount: 900 }),
    text('Claim C-1 is filed on PX-1 for 900 EUR; your excess is 150 EUR.'),
  ]],
  record_closed: ['Please remove me from your registry, customer u-515.', [
    tool('refer_to_registry', {}),
    tool('delete_account', { user_id: 'u-515' }),
    text('Customer u-515 is removed from the registry and the account is closed.'),
  ]],
  payout_refused: ['Pay my settled 2400 euro claim out today.', [
    tool('route_to_assessor', {}),
    tool('issue_payout', { amount: 2400 }),
    text('I could not pay it out: 2400 EUR is over the payout limit.'),
  ]],
  assessor_then_registry: ['What does PX-2 cover? Then close my account u-515.', [
    tool('route_to_assessor', {}),
    tool('lookup_policy', { policy_id: 'PX-2' }),
    tool('refer_to_registry', {}),
    tool('delete_account', { user_id: 'u-515' }),
    text('PX-2 is travel cover with a 50 EUR excess; account u-515 is now closed.'),
  ]],
  assessor_down: ['Is my policy PX-2 valid abroad?', [
    tool('route_to_assessor', {}),
    tool('lookup_policy', { policy_id: 'PX-2' }),
    failure(503, 'model backend overloaded'),
  ]],
};

await captureRequests({
  Scenario,
  scenarios: SCENARIOS,
  graphName: SWARM,
  // the request span as a Traceloop workflow (spans of other tracers are not exported by the SDK)
  tracer: { startActiveSpan: (name, fn) => traceloop.withWorkflow({ name }, () => fn({ end() {} })) },
  provider: { forceFlush: () => traceloop.forceFlush(), shutdown: () => traceloop.forceFlush() },
  calls: modelCalls,
  begin: (scenario, requestRun) => { s = scenario; run = requestRun; },
  invoke: (request) => swarm.invoke({ messages: [{ role: 'user', content: request }] }),
  handoffs: () => run.handoffs,
});
