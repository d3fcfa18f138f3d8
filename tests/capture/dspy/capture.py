"""A DSPy ReAct agent traced by openinference-instrumentation-dspy.

`dspy.LM` talks to the scripted model through DSPy's own chat adapter: every step is one chat completion
whose text holds the fields `next_thought`, `next_tool_name` and `next_tool_args`, and the answer is
extracted by one more call once the model picks ReAct's built-in `finish` tool (which only marks the end,
and is not a tool call of the agent). ReAct runs one tool per step, so there is no parallel scenario.
The model's response cache is off so that every step reaches the model. Each scenario is wrapped in a
`handle_request` span, as a web service would.
"""

import json
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # LiteLLM reads its bundled price list, offline

import dspy
from client import Scenario
from dspy_lm import ModelCalls, configure
from openinference.instrumentation.dspy import DSPyInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from scenarios import STANDARD, travel_tools

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
DSPyInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")
s: Scenario  # the scenario being captured; the tools record into it

configure()


agent = dspy.ReAct("question -> answer", tools=travel_tools(lambda: s))


def step(thought: str, tool_name: str, arguments: dict) -> dict:
    """One ReAct step as the chat adapter expects the model to write it."""
    text = (
        f"[[ ## next_thought ## ]]\n{thought}\n\n[[ ## next_tool_name ## ]]\n{tool_name}\n\n"
        f"[[ ## next_tool_args ## ]]\n{json.dumps(arguments)}\n\n[[ ## completed ## ]]"
    )
    return {"text": text}


def answer(text: str) -> dict:
    """The extraction call's reply: ChainOfThought's reasoning, then the answer."""
    return {
        "text": f"[[ ## reasoning ## ]]\nFrom the trajectory.\n\n[[ ## answer ## ]]\n{text}\n\n[[ ## completed ## ]]"
    }


def react_replies(replies: list[dict]) -> list[dict]:
    """The standard replies in ReAct's form: each tool call a step; a final text is `finish`, then the answer."""
    out = []
    for reply in replies:
        if "tool_calls" in reply:
            out.extend(step(f"I will call {c['name']}.", c["name"], c["arguments"]) for c in reply["tool_calls"])
        elif "text" in reply:
            out += [step("I have everything I need.", "finish", {}), answer(reply["text"])]
        else:
            out.append(reply)
    return out


def run(question: str) -> None:
    s.run("ReAct", question)
    ModelCalls.count = 0
    try:
        prediction = agent(question=question)
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        s.finish(None, "error", ModelCalls.count)
        return
    s.finish(prediction.answer, "ok", ModelCalls.count)


SCENARIOS = {name: STANDARD[name] for name in STANDARD if name != "parallel"}

for name, (questions, replies) in SCENARIOS.items():
    with Scenario(name, react_replies(replies)) as s:
        with tracer.start_as_current_span("handle_request"):
            for question in questions:
                run(question)
        provider.force_flush()
