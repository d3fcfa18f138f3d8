/**
 * Genkit's multi-agent pattern: a triage prompt whose tools are specialist prompts (`definePrompt` with `tools:
 * [claims_counter, payout_office]`); when the model calls one, Genkit hands the conversation over to that prompt
 * (its system prompt and tools replace the triage's, the call answered "transferred to <name>"). Traced by Genkit's
 * native OpenTelemetry export (`enableTelemetry` from `genkit/tracing`) with an OTLP/HTTP protobuf span processor;
 * requests run in a flow (`handle_claim`). The tools are those of insurance.mjs; the model is the OpenAI plugin of
 * `@genkit-ai/compat-oai` at OPENAI_BASE_URL (client retries off).
 *
 * The ground truth is one request run per request, entered at intake_desk: the user's request, the answer the flow
 * returned (none when it failed), every agent's model calls (counted where they leave the process) and tool calls
 * (recorded by the tools); the call of a specialist prompt is a handoff from intake_desk to it, not a tool call.
 * Genkit lets a tool's exception fail the whole generation: in `payout_refused` the request fails at the tool.
 */
import path from 'node:path';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { openAI } from '@genkit-ai/compat-oai/openai';
import { genkit, z } from 'genkit';
import { enableTelemetry, flushTracing } from 'genkit/tracing';

const { Scenario, text, tool, failure, outcome } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'client.mjs'));
const { claimsTools } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'insurance.mjs'));

let s; // the scenario being captured
const calls = []; // the agent behind each model call of the current request, in order

/** Each model request noted by the agent whose instructions lead it (Genkit puts the acting prompt's first). */
const INSTRUCTIONS = {
  'You take in insurance customers and pass them to the desk that can help.': 'intake_desk',
  'You file claims on insurance policies and close accounts.': 'claims_counter',
  'You pay settled claims out.': 'payout_office',
};
async function countingFetch(url, init) {
  if (String(url).endsWith('/chat/completions')) {
    const first = JSON.parse(init.body).messages[0];
    calls.push(INSTRUCTIONS[first.content] ?? 'unknown');
  }
  return fetch(url, init);
}

const ai = genkit({ plugins: [openAI({ fetch: countingFetch, maxRetries: 0 })] });
const model = openAI.model('gpt-4o-mini');
await enableTelemetry({ // after genkit(), which installs the Node telemetry provider
  serviceName: 'claims-service',
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${process.env.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces` }))],
});

// insurance.mjs's tools, declared as Genkit tools
const asGenkitTool = (fn, { name, description, schema }) => ai.defineTool({ name, description, inputSchema: schema }, fn);
const tools = claimsTools({ tool: asGenkitTool, z, scenario: () => s });

const claimsCounter = ai.definePrompt({
  name: 'claims_counter',
  description: 'Files claims on policies and closes accounts.',
  model,
  tools: [tools.lookup_policy, tools.file_claim, tools.delete_account],
  system: instructionsOf('claims_counter'),
});
const payoutOffice = ai.definePrompt({
  name: 'payout_office',
  description: 'Pays settled claims out.',
  model,
  tools: [tools.issue_payout],
  system: instructionsOf('payout_office'),
});
const intakeDesk = ai.definePrompt({
  name: 'intake_desk',
  description: 'Takes in customers and passes them on.',
  model,
  tools: [claimsCounter, payoutOffice],
  system: instructionsOf('intake_desk'),
});
function instructionsOf(agent) {
  return Object.keys(INSTRUCTIONS).find((key) => INSTRUCTIONS[key] === agent);
}

const handleClaim = ai.defineFlow({ name: 'handle_claim', inputSchema: z.string(), outputSchema: z.string() },
  async (request) => (await intakeDesk({}, { messages: [{ role: 'user', content: [{ text: request }] }] })).text);

/** One request through the flow; the ground truth is what it returned. */
async function serve(prompt, passedTo) {
  const run = s.run('intake_desk', prompt);
  calls.length = 0;
  const { output, status } = await outcome(() => handleClaim(prompt));
  s.finish(output, status, calls.length);
  Object.assign(run, {
    handoffs: [{ from: 'intake_desk', to: passedTo }],
    nested_runs_allowed: true,
    note: `The request run is the flow's, entered at intake_desk, with the model and tool calls of the prompt it passed the conversation to; calling ${passedTo} is a handoff. Model calls, by whom: ${JSON.stringify(calls)}.`,
  });
}

const SCENARIOS = [
  ['claim_filed', 'Storm damage on policy PX-1: please file a claim for 900 EUR.', 'claims_counter', [
    tool('claims_counter', {}),
    tool('lookup_policy', { policy_id: 'PX-1' }),
    tool('file_claim', { policy_id: 'PX-1', amount: 900 }),
    text('Policy PX-1 is home cover with a 150 EUR excess; claim C-1 for 900 EUR is filed.'),
  ]],
  ['account_closed', 'I am leaving: close my account, customer c-4410.', 'claims_counter', [
    tool('claims_counter', {}),
    tool('delete_account', { user_id: 'c-4410' }),
    text('Your account c-4410 is closed.'),
  ]],
  ['payout_refused', 'Pay out my settled claim, 750 EUR please.', 'payout_office', [
    tool('payout_office', {}),
    tool('issue_payout', { amount: 750 }),
  ]],
  ['counter_failure', 'File a claim of 300 EUR on policy PX-2.', 'claims_counter', [
    tool('claims_counter', {}),
    failure(500, 'model backend unavailable'),
  ]],
];

for (const [name, prompt, passedTo, replies] of SCENARIOS) {
  s = await new Scenario(name, replies).begin();
  await serve(prompt, passedTo);
  await flushTracing();
  await s.end({ nested_runs_allowed: true });
}
process.exit(0); // Genkit's telemetry SDK keeps the process alive
