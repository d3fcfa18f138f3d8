"""MLflow Tracing, default span schema: `mlflow.langchain.autolog()` on LangGraph's prebuilt ReAct agent.

A travel assistant (`create_react_agent` on `ChatOpenAI`, the standard tools of `scenarios.py`, a `ToolNode`
that turns a raising tool into an error message) driven through the standard scenarios. MLflow exports over
OTLP because OTEL_EXPORTER_OTLP_ENDPOINT is set, through the service's own TracerProvider
(MLFLOW_USE_DEFAULT_TRACER_PROVIDER=false, `mlflow.tracing.enable()` at start-up), so each scenario's
`handle_request` span is the trace's root.
"""

import os

os.environ["MLFLOW_USE_DEFAULT_TRACER_PROVIDER"] = "false"

import mlflow
from client import Scenario
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import ToolNode, create_react_agent
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from scenarios import STANDARD, travel_tools

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
trace.set_tracer_provider(provider)
mlflow.tracing.enable()  # MLflow joins the provider now, before the service's first span
mlflow.langchain.autolog()
tracer = trace.get_tracer("travel-service")
s: Scenario  # the scenario being captured; the tools record what they really receive and return


class CountCalls(BaseCallbackHandler):
    """Counts the agent's chat model calls (the OpenAI client's own HTTP retries are inside one call)."""

    calls = 0

    def on_chat_model_start(self, *args, **kwargs):
        self.calls += 1


counter = CountCalls()
model = ChatOpenAI(model="gpt-4o-mini", callbacks=[counter])
tools = ToolNode([tool(f) for f in travel_tools(lambda: s)], handle_tool_errors=True)
travel_agent = create_react_agent(model, tools, prompt="You are a travel assistant.", name="travel_agent")

for name, (requests, replies) in STANDARD.items():
    with Scenario(name, replies) as s:
        with tracer.start_as_current_span("handle_request"):
            for request in requests:
                s.run("travel_agent", request)
                counter.calls, status = 0, "ok"
                try:
                    state = travel_agent.invoke({"messages": [{"role": "user", "content": request}]})
                    answer = state["messages"][-1].content
                except Exception as exc:
                    print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
                    answer, status = None, "error"
                s.finish(answer, status, counter.calls)
        provider.force_flush()
