/**
 * Vercel AI SDK 7 (`ai`) with its default OpenTelemetry integration (`@ai-sdk/otel` `OpenTelemetry`,
 * GenAI semantic conventions), registered with `registerTelemetry`. A travel agent is `generateText`
 * with tools and a step limit, talking Chat Completions to the scripted model through
 * `@ai-sdk/openai-compatible`. Spans go through the OTel JS SDK (`@opentelemetry/sdk-trace`
 * TracerProvider, SimpleSpanProcessor, OTLP/HTTP protobuf exporter). Each scenario runs inside a
 * `handle_request` span; the handoff scenario is a tool whose execute runs a booking sub-agent.
 */
import path from 'node:path';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { OpenTelemetry } from '@ai-sdk/otel';
import { generateText, isStepCount, registerTelemetry, tool as aiTool } from 'ai';
import { z } from 'zod';

const { Scenario, text, tool, tools, failure } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'client.mjs'));

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const provider = new TracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'travel-service' }),
  spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter() })],
});
trace.setGlobalTracerProvider(provider);
registerTelemetry(new OpenTelemetry());
const tracer = trace.getTracer('travel-service');

const model = createOpenAICompatible({
  name: 'openai',
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY,
}).chatModel('gpt-4o-mini');

let s; // the scenario being captured
// Ground truth goes to the run that really made the call (the handoff nests one run in another).
const record = (run, name, args, result, error = false) =>
  run.tool_calls.push({ name, arguments: args, result: error ? null : result, error });

function travelTools(run) {
  const def = (name, schema, fn) => aiTool({
    description: name,
    inputSchema: z.object(schema),
    execute: async (args) => {
      try {
        const result = await fn(args);
        record(run, name, args, result);
        return result;
      } catch (err) {
        record(run, name, args, null, true);
        throw err;
      }
    },
  });
  return {
    search_flights: def('search_flights', { origin: z.string(), destination: z.string() },
      (a) => `UA123 09:00 $320 (${a.origin}-${a.destination})`),
    book_flight: def('book_flight', { flight_id: z.string() }, () => 'booked ABC123456'),
    charge_card: def('charge_card', { amount: z.number() }, () => { throw new Error('card declined'); }),
    get_weather: def('get_weather', { city: z.string() }, (a) => ({ Paris: '12C rain', Tokyo: '18C sunny' })[a.city] ?? '20C clear'),
    delete_account: def('delete_account', {}, () => 'account deleted'),
  };
}

/** One agent run: generateText with tools; the ground truth is what the call returned or threw. */
async function agent(name, prompt, extraTools = () => ({})) {
  const run = s.run(name, prompt);
  let llmCalls = 0;
  try {
    const result = await generateText({
      model,
      system: 'You are a travel assistant.',
      prompt,
      tools: { ...travelTools(run), ...extraTools(run) },
      stopWhen: isStepCount(10),
      experimental_telemetry: { isEnabled: true, functionId: name },
      onLanguageModelCallStart: () => { llmCalls += 1; },
    });
    Object.assign(run, { output: result.text, status: 'ok', llm_calls: llmCalls });
    return result.text;
  } catch (err) {
    console.log(`   ${name} failed: ${err.name}: ${err.message}`);
    Object.assign(run, { output: null, status: 'error', llm_calls: llmCalls });
    throw err;
  }
}

const handoff = () => ({
  ask_booking_agent: aiTool({
    description: 'Hand the booking over to the booking agent.',
    inputSchema: z.object({ request: z.string() }),
    execute: async (args) => {
      const outer = s.runs.at(-1);
      const answer = await agent('booking_agent', args.request);
      record(outer, 'ask_booking_agent', args, answer);
      return answer;
    },
  }),
});

const FLIGHT = 'Book me the cheapest flight from SFO to JFK tomorrow.';
const SCENARIOS = [
  ['happy', [[FLIGHT]], [
    tool('search_flights', { origin: 'SFO', destination: 'JFK' }),
    tool('book_flight', { flight_id: 'UA123' }),
    text('Your flight UA123 is booked. Confirmation: ABC123456'),
  ]],
  ['forbidden', [['Please close my account, I am done.']], [
    tool('delete_account', {}),
    text('Your account has been deleted.'),
  ]],
  ['tool_error', [['Charge my card 120 dollars for the upgrade.']], [
    tool('charge_card', { amount: 120 }),
    text('Sorry, your card was declined.'),
  ]],
  ['many_calls', [['Plan a trip: check flights and weather for several cities.']], [
    tool('search_flights', { origin: 'SFO', destination: 'JFK' }),
    tool('get_weather', { city: 'Paris' }),
    tool('search_flights', { origin: 'JFK', destination: 'CDG' }),
    tool('get_weather', { city: 'Tokyo' }),
    tool('search_flights', { origin: 'CDG', destination: 'HND' }),
    tool('get_weather', { city: 'Berlin' }),
    tool('book_flight', { flight_id: 'UA123' }),
    text('Trip planned: UA123 booked; Paris rainy, Tokyo sunny, Berlin clear.'),
  ]],
  ['parallel', [["What's the weather in Paris and Tokyo?"]], [
    tools([['get_weather', { city: 'Paris' }], ['get_weather', { city: 'Tokyo' }]]),
    text('Paris: 12C and rain. Tokyo: 18C and sunny.'),
  ]],
  ['agent_error', [['Book me a flight to Mars.']], [
    tool('search_flights', { origin: 'SFO', destination: 'MARS' }),
    failure(500, 'model backend unavailable'),
  ]],
  ['two_runs', [["What's the weather in Paris?"], [FLIGHT]], [
    tool('get_weather', { city: 'Paris' }),
    text('Paris: 12C and rain.'),
    tool('search_flights', { origin: 'SFO', destination: 'JFK' }),
    text('The cheapest is UA123 at 09:00 for $320.'),
  ]],
  ['handoff', [[FLIGHT, handoff]], [
    tool('ask_booking_agent', { request: 'Book flight UA123 from SFO to JFK tomorrow.' }),
    tool('book_flight', { flight_id: 'UA123' }),
    text('Booked UA123, confirmation ABC123456.'),
    text('The booking agent booked UA123 for you. Confirmation: ABC123456'),
  ]],
];

for (const [name, runs, replies] of SCENARIOS) {
  s = await new Scenario(name, replies).begin();
  await tracer.startActiveSpan('handle_request', async (span) => {
    try {
      for (const [prompt, extra] of runs) await agent('travel_agent', prompt, extra);
    } catch {
      // the failed run is recorded; the service answers with an error page
    } finally {
      span.end();
    }
  });
  await provider.forceFlush();
  await s.end();
}
await provider.shutdown();
