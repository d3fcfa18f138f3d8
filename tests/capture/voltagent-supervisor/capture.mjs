/**
 * A VoltAgent supervisor (`@voltagent/core` Agent with `subAgents`) over two sub-agents, traced by VoltAgent's own
 * OpenTelemetry observability (`VoltAgentObservability`) with an OTLP/HTTP protobuf span processor added through its
 * `spanProcessors` option (VoltOps sync off). `claims_lead` (lookup_policy) delegates with VoltAgent's own
 * `delegate_task` tool (`targetAgents` names the sub-agent) to `settlement_desk` (file_claim, issue_payout) or
 * `closure_desk` (delete_account); the sub-agent's answer comes back to the lead as the tool's result and the lead
 * answers. The tools are those of insurance.mjs; the model is an `@ai-sdk/openai-compatible` chat model at
 * OPENAI_BASE_URL.
 *
 * The ground truth is one request run per request, entered at claims_lead: the user's request, the lead's answer
 * (none when the run failed), every agent's model calls (counted on each agent's model) and tool calls (recorded by
 * the tools); each `delegate_task` call is a handoff from the lead to the agent it names, not a tool call. VoltAgent
 * writes one `llm:*` span per agent generation, not per model call (the first request's messages, the last response's
 * usage and finish reason): the trace cannot carry the model calls nor the conversation between them, so every run
 * lacks `llm_calls` and `messages`.
 */
import path from 'node:path';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Agent, VoltAgentObservability, createTool } from '@voltagent/core';
import { z } from 'zod';

const { Scenario, text, tool, failure, outcome } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'client.mjs'));
const { countedChatModel } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'model_calls.mjs'));
const { claimsTools } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'insurance.mjs'));

const exporter = new OTLPTraceExporter({ url: `${process.env.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces` });
const observability = new VoltAgentObservability({
  serviceName: 'claims-service',
  spanProcessors: [new SimpleSpanProcessor(exporter)],
  voltOpsSync: { sampling: { strategy: 'never' } }, // no VoltOps cloud export
});

let s; // the scenario being captured
const calls = []; // the agent behind each model call of the current request, in order

/** The chat model, noting which agent makes each call. */
const countedModel = (agentName) => countedChatModel(createOpenAICompatible, () => calls.push(agentName));

// insurance.mjs's tools, declared as VoltAgent tools
const asVoltTool = (execute, { name, description, schema }) => createTool({ name, description, parameters: schema, execute });
const tools = claimsTools({ tool: asVoltTool, z, scenario: () => s });

const common = { memory: false, maxRetries: 0, observability };
const settlementDesk = new Agent({
  ...common,
  name: 'settlement_desk',
  purpose: 'Files claims and pays settled claims out.',
  instructions: 'You file insurance claims and pay settled claims out.',
  model: countedModel('settlement_desk'),
  tools: [tools.file_claim, tools.issue_payout],
});
const closureDesk = new Agent({
  ...common,
  name: 'closure_desk',
  purpose: 'Closes customer accounts.',
  instructions: "You close customers' accounts when they ask.",
  model: countedModel('closure_desk'),
  tools: [tools.delete_account],
});
const claimsLead = new Agent({
  ...common,
  name: 'claims_lead',
  instructions: 'You lead the claims team: read policies yourself, delegate filing, payouts and closures.',
  model: countedModel('claims_lead'),
  tools: [tools.lookup_policy],
  subAgents: [settlementDesk, closureDesk],
});

/** One request to the supervisor; the ground truth is what its call returned. */
async function serve(prompt, delegatedTo) {
  const run = s.run('claims_lead', prompt);
  calls.length = 0;
  const { output, status } = await outcome(async () => (await claimsLead.generateText(prompt)).text);
  s.finish(output, status, calls.length, ['llm_calls', 'messages']);
  Object.assign(run, {
    handoffs: delegatedTo.map((to) => ({ from: 'claims_lead', to })),
    nested_runs_allowed: true,
    note: `The request run is claims_lead's, with its sub-agents' model and tool calls; each delegate_task call is a handoff to the agent it names. Model calls, by whom: ${JSON.stringify(calls)}.`,
  });
}

const delegate = (task, agent) => tool('delegate_task', { task, targetAgents: [agent] });
const SCENARIOS = [
  ['claim_filed', 'My policy is PX-1; file a claim for 900 EUR of storm damage.', ['settlement_desk'], [
    tool('lookup_policy', { policy_id: 'PX-1' }),
    delegate('File a claim on policy PX-1 for 900 EUR.', 'settlement_desk'),
    tool('file_claim', { policy_id: 'PX-1', amount: 900 }),
    text('Claim C-1 is filed on PX-1 for 900 EUR.'),
    text('Policy PX-1 is home cover with a 150 EUR excess; your claim C-1 for 900 EUR is filed.'),
  ]],
  ['payout_refused', 'Pay out my settled claim C-1, 750 EUR.', ['settlement_desk'], [
    delegate('Pay out settled claim C-1: 750 EUR.', 'settlement_desk'),
    tool('issue_payout', { amount: 750 }),
    text('The payout of 750 EUR failed: the payout limit is exceeded.'),
    text('Sorry, the 750 EUR payout could not be made: it exceeds the payout limit.'),
  ]],
  ['account_closed', 'Close my account please, customer c-8812.', ['closure_desk'], [
    delegate('Close the account of customer c-8812.', 'closure_desk'),
    tool('delete_account', { user_id: 'c-8812' }),
    text('Account c-8812 is closed.'),
    text('Your account c-8812 is closed.'),
  ]],
  ['desk_failure', 'File a claim of 300 EUR on policy PX-2.', ['settlement_desk'], [
    delegate('File a claim on policy PX-2 for 300 EUR.', 'settlement_desk'),
    failure(500, 'model backend unavailable'),
  ]],
];

for (const [name, prompt, delegatedTo, replies] of SCENARIOS) {
  s = await new Scenario(name, replies).begin();
  await serve(prompt, delegatedTo);
  await observability.forceFlush();
  await s.end({ nested_runs_allowed: true });
}
await observability.shutdown();
process.exit(0); // VoltAgent's in-memory span store and model registry keep timers that never let Node exit
