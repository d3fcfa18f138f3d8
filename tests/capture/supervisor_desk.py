"""A `langgraph_supervisor` desk for the LangGraph capture scripts (imported from their own environments): workers
made with `create_react_agent` over a `ToolNode` that turns a raising tool into an error message, a supervisor that
hands work to them with handoff tools of its own names, and one request served with its ground truth."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from client import Scenario
from langchain_count import CountCalls
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph_handoffs import graph_handoffs
from langgraph_supervisor import create_handoff_tool, create_supervisor


class Desk:
    """The compiled supervisor graph and the model calls each of its agents made in the current request."""

    def __init__(
        self,
        supervisor: str,
        workers: dict[str, tuple[list[Any], str]],
        handoffs: dict[str, tuple[str, str]],
        prompt: str,
        **model: Any,
    ) -> None:
        """`workers`: {name: (tools, prompt)}; `handoffs`: {tool name: (worker, description)}; `model`: extra
        ChatOpenAI settings."""
        self.supervisor = supervisor
        self.model_calls: Counter[str] = Counter()

        def chat_model(agent_name: str) -> ChatOpenAI:
            counter = CountCalls(self.model_calls, agent_name)
            return ChatOpenAI(model="gpt-4o-mini", callbacks=[counter], **model)

        agents = [
            create_react_agent(chat_model(name), ToolNode(tools, handle_tool_errors=True), prompt=text, name=name)
            for name, (tools, text) in workers.items()
        ]
        tools = [
            create_handoff_tool(agent_name=worker, name=name, description=description)
            for name, (worker, description) in handoffs.items()
        ]
        self.graph = create_supervisor(
            agents, model=chat_model(supervisor), tools=tools, prompt=prompt, supervisor_name=supervisor
        ).compile(name=supervisor)

    def serve(self, scenario: Scenario, request: str, config: dict[str, Any] | None = None) -> None:
        """Run one request through the graph and record its ground truth: the supervisor's last answer, every
        agent's model calls, and the handoffs read from the graph's last state (each worker's automatic transfer
        back included); a request whose graph raised failed with no answer."""
        run = scenario.run(self.supervisor, request)
        self.model_calls.clear()
        messages: list[Any] = []
        status = "ok"
        try:
            for state in self.graph.stream(
                {"messages": [{"role": "user", "content": request}]}, config=config, stream_mode="values"
            ):
                messages = state["messages"]
            answer = messages[-1].content
        except Exception as exc:
            print(f"   run failed as scripted: {type(exc).__name__}: {str(exc)[:160]}")
            answer, status = None, "error"
        scenario.finish(answer, status, sum(self.model_calls.values()))
        back: Callable[[str], str] = lambda _: self.supervisor  # noqa: E731 (the one agent every handoff returns to)
        run.update(
            handoffs=graph_handoffs(messages, back, back),
            nested_runs_allowed=True,
            note="The request run is the supervisor graph with every agent's model and tool calls; the handoffs "
            f"include each worker's automatic transfer back. Model calls per agent: {dict(self.model_calls)}.",
        )
