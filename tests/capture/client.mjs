// Control client for Node capture scripts: the same calls as client.py (see harness.py).
const HARNESS = process.env.CAPTURE_HARNESS_URL;

export const text = (content, extra = {}) => ({ text: content, ...extra });
export const tool = (name, args, extra = {}) => ({ tool_calls: [{ name, arguments: args }], ...extra });
export const tools = (calls, extra = {}) => ({ tool_calls: calls.map(([name, args]) => ({ name, arguments: args })), ...extra });
export const failure = (status = 500, message = "scripted model failure") => ({ error: status, message });

async function post(path, body) {
  const response = await fetch(HARNESS + path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return response.json();
}

export class Scenario {
  constructor(name, replies) {
    this.name = name;
    this.replies = replies;
    this.runs = [];
  }
  async begin() {
    await post("/_harness/begin", { scenario: this.name, replies: this.replies });
    return this;
  }
  run(agentName, input) {
    this.runs.push({ agent_name: agentName, input, tool_calls: [] });
    return this.runs.at(-1);
  }
  tool(name, args, result = null, error = false) {
    this.runs.at(-1).tool_calls.push({ name, arguments: args, result: error ? null : result, error });
  }
  finish(output, status = "ok", llmCalls = 0, lacks = []) {
    Object.assign(this.runs.at(-1), { output, status, llm_calls: llmCalls });
    if (lacks.length) this.runs.at(-1).lacks = [...lacks].sort();
  }
  async end(spec = {}) {
    // spec: scenario-level ground truth beside the runs (nested_runs_allowed, note), as in client.py
    const answer = await post("/_harness/end", { runs: this.runs, ...spec });
    console.log(`   ${this.name}: ${answer.requests} OTLP request(s), traces ${JSON.stringify(answer.trace_ids)}`);
  }
}

/** What a run call gave the user: its answer and `ok`, or no answer and `error` when it threw. */
export async function outcome(call) {
  try {
    return { output: await call(), status: 'ok' };
  } catch (err) {
    console.log(`   run failed: ${err?.message ?? err}`);
    return { output: null, status: 'error' };
  }
}
