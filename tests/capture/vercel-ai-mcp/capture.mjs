/**
 * Vercel AI SDK 7 (`ai`) agent whose tools are on an MCP server in another process: `generateText` with the tools
 * of `@ai-sdk/mcp`'s client (`createMCPClient` over `StdioMCPTransport`), served by `pharmacy_server.mjs`
 * (`@modelcontextprotocol/sdk` over stdio, one server process per request). The agent is traced by the AI SDK's
 * default OpenTelemetry integration (`@ai-sdk/otel` `OpenTelemetry`, GenAI semantic conventions) registered with
 * `registerTelemetry`, `experimental_telemetry` on; the MCP client and the server write no spans of their own.
 * The model is Chat Completions through `@ai-sdk/openai-compatible`. Each request runs inside a `handle_request` span.
 *
 * The ground truth is one run per request, `pharmacy_counter`'s: the user's request, the answer generateText
 * returned (or that it threw), its model calls (onLanguageModelCallStart) and the calls the server's tools really
 * ran, from the server's log. `bill_insurer` fails on the server: the client hands the model the `isError` result
 * (the SDK does not throw), so the tool failed and the run goes on. In `backend_down` the model backend fails after
 * a tool call and generateText throws.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { createMCPClient } from '@ai-sdk/mcp';
import { StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { OpenTelemetry } from '@ai-sdk/otel';
import { generateText, isStepCount, registerTelemetry } from 'ai';

const { Scenario, text, tool, tools, failure } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'client.mjs'));

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const provider = new TracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'pharmacy-counter' }),
  spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter() })],
});
trace.setGlobalTracerProvider(provider);
registerTelemetry(new OpenTelemetry());
const tracer = trace.getTracer('pharmacy-counter');

const model = createOpenAICompatible({
  name: 'openai',
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY,
}).chatModel('gpt-4o-mini');
const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'pharmacy_server.mjs');

/** Serve one request with a fresh server process; the answer, with the server's log read into the run. */
async function serve(run, request) {
  const dir = mkdtempSync(path.join(tmpdir(), 'pharmacy-mcp-'));
  const log = path.join(dir, 'tools.jsonl');
  const mcp = await createMCPClient({
    transport: new StdioMCPTransport({
      command: process.execPath,
      args: [SERVER],
      env: { ...process.env, CAPTURE_TOOL_LOG: log },
    }),
    clientName: 'pharmacy-counter',
  });
  try {
    const result = await generateText({
      model,
      system: 'You are the pharmacy counter: prescriptions, refills, insurer billing and accounts.',
      prompt: request,
      tools: await mcp.tools(),
      stopWhen: isStepCount(10),
      experimental_telemetry: { isEnabled: true, functionId: 'pharmacy_counter' },
      onLanguageModelCallStart: () => { run.llm_calls += 1; },
    });
    return result.text;
  } finally {
    await mcp.close();
    let lines = [];
    try { lines = readFileSync(log, 'utf8').split('\n').filter(Boolean); } catch { /* no tool ran */ }
    run.tool_calls.push(...lines.map((line) => JSON.parse(line)));
    rmSync(dir, { recursive: true, force: true });
  }
}

const SCENARIOS = [
  ['refill_ready', 'Please refill my prescription RX-204; I will pick it up at Elm Street.', [
    tool('find_prescription', { rx_id: 'RX-204' }),
    tool('order_refill', { rx_id: 'RX-204', branch: 'Elm Street' }),
    text('Your refill of RX-204 (amoxicillin 500 mg) is ordered: pick it up at Elm Street on Friday, order RF-3310.'),
  ]],
  ['insurer_down', 'Bill my insurer for prescription RX-204.', [
    tool('bill_insurer', { rx_id: 'RX-204' }),
    text('Sorry, I could not bill your insurer for RX-204: their gateway timed out. Please try again later.'),
  ]],
  ['close_account', 'Delete my pharmacy account, patient p-7731.', [
    tool('delete_account', { user_id: 'p-7731' }),
    text('Your pharmacy account p-7731 has been deleted.'),
  ]],
  ['two_branches', 'When are the Elm Street and Harbour branches open today?', [
    tools([['branch_hours', { branch: 'Elm Street' }], ['branch_hours', { branch: 'Harbour' }]]),
    text('Elm Street is open 08:00-20:00 and Harbour 09:00-17:30 today.'),
  ]],
  ['backend_down', 'Can I still refill RX-310?', [
    tool('find_prescription', { rx_id: 'RX-310' }),
    failure(500, 'model backend unavailable'),
  ]],
];

for (const [name, request, replies] of SCENARIOS) {
  const s = await new Scenario(name, replies).begin();
  const run = s.run('pharmacy_counter', request);
  run.llm_calls = 0;
  await tracer.startActiveSpan('handle_request', async (span) => {
    try {
      s.finish(await serve(run, request), 'ok', run.llm_calls);
    } catch (err) {
      console.log(`   ${name} failed as scripted: ${err.name}: ${err.message}`);
      s.finish(null, 'error', run.llm_calls);
    } finally {
      span.end();
    }
  });
  run.handoffs = [];
  await provider.forceFlush();
  await s.end();
}
await provider.shutdown();
