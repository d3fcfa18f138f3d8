"""A smolagents manager with two managed agents, traced by OpenLIT (`openlit.init`, its smolagents and OpenAI
instrumentations, message content on).

`farm_advisor` (a `ToolCallingAgent` on `OpenAIServerModel`, Chat Completions, not streamed) owns the
`check_forecast` tool and manages `soil_lab` (test_soil, order_fertilizer) and `grant_office` (apply_grant,
which fails, and delete_account), each a `ToolCallingAgent` that smolagents exposes to the manager as a tool
named after the agent. Every agent answers through smolagents' own `final_answer` tool (its argument is the
answer, not a tool call). Each request runs inside a `handle_request` span.

The ground truth is the request run of the manager: the user's request, its answer, every agent's model calls
(one per action step in each agent's memory, planning off) and tool calls in the order they started: a
managed agent's call (what the manager asked and got back, recorded around the managed agent's `__call__`)
followed by that agent's own calls, which the tools record. In `soil_lab_failure` the model backend fails
during the managed agent's run (and stays down for the manager's next call): the request fails.
"""

import os

import openlit
from client import Scenario, failure
from client import tool as reply
from opentelemetry import trace
from smolagents import ActionStep, OpenAIServerModel, ToolCallingAgent, tool

SERVICE = "farm-desk"
openlit.init(
    otlp_endpoint=os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"],
    application_name=SERVICE,
    service_name=SERVICE,
    disable_batch=True,
    disable_metrics=True,  # the harness records traces and logs only
    disabled_instrumentors=["urllib"],  # the harness's own control calls, not the service's
)
tracer = trace.get_tracer(SERVICE)

model = OpenAIServerModel(
    model_id="gpt-4o-mini",
    api_base=os.environ["OPENAI_BASE_URL"],
    api_key=os.environ["OPENAI_API_KEY"],
    client_kwargs={"max_retries": 0},
)
s: Scenario  # the scenario being captured; every call goes into its request run
notes: list[str] = []  # each managed agent's own run, for the note
counted: dict[str, int] = {}  # model calls per managed agent


def flush() -> None:
    trace.get_tracer_provider().force_flush()
    from opentelemetry._logs import get_logger_provider

    logs = get_logger_provider()
    if hasattr(logs, "force_flush"):
        logs.force_flush()


@tool
def check_forecast(region: str) -> str:
    """The week's weather forecast for a farming region.

    Args:
        region: the region name
    """
    result = f"{region}: dry week, 24C, no rain before Sunday"
    s.tool("check_forecast", {"region": region}, result)
    return result


@tool
def test_soil(field_id: str) -> str:
    """Lab analysis of a field's soil.

    Args:
        field_id: the field to analyse
    """
    result = f"{field_id}: pH 6.1, low nitrogen"
    s.tool("test_soil", {"field_id": field_id}, result)
    return result


@tool
def order_fertilizer(field_id: str, product: str) -> str:
    """Order fertilizer for a field.

    Args:
        field_id: the field to deliver to
        product: the fertilizer to order
    """
    result = f"order N-402 placed: {product} for {field_id}"
    s.tool("order_fertilizer", {"field_id": field_id, "product": product}, result)
    return result


@tool
def apply_grant(farm_id: str, scheme: str) -> str:
    """Apply for a farming grant.

    Args:
        farm_id: the applying farm
        scheme: the grant scheme
    """
    s.tool("apply_grant", {"farm_id": farm_id, "scheme": scheme}, error=True)
    raise RuntimeError("grant portal closed")


@tool
def delete_account(user_id: str) -> str:
    """Delete the customer's account.

    Args:
        user_id: the account to delete
    """
    result = f"account {user_id} deleted"
    s.tool("delete_account", {"user_id": user_id}, result)
    return result


def action_steps(agent: ToolCallingAgent) -> int:
    """Model calls of the agent's last run: one per action step (planning is off)."""
    return sum(isinstance(step, ActionStep) for step in agent.memory.steps)


class Managed(ToolCallingAgent):
    """A managed agent whose call (what the manager asked and got back) goes into the request run before its
    own calls, and whose model calls count towards the request's."""

    def __call__(self, task: str, **kwargs):
        entry = {"name": self.name, "arguments": {"task": task, **kwargs}, "result": None, "error": False}
        s.runs[-1]["tool_calls"].append(entry)
        try:
            answer = super().__call__(task, **kwargs)
        except Exception:
            entry.update(error=True)
            notes.append(f"{self.name}: {action_steps(self)} model call(s), failed")
            raise
        finally:
            counted[self.name] = counted.get(self.name, 0) + action_steps(self)
        entry["result"] = str(answer)
        notes.append(f"{self.name}: {action_steps(self)} model call(s), answer {self.final_answer!r}")
        return answer

    def run(self, task, *args, **kwargs):
        self.final_answer = None
        out = super().run(task, *args, **kwargs)
        self.final_answer = out if isinstance(out, str) else getattr(out, "output", out)
        return out


def team() -> ToolCallingAgent:
    soil_lab = Managed(
        tools=[test_soil, order_fertilizer],
        model=model,
        name="soil_lab",
        description="Analyses soil and orders fertilizer.",
        verbosity_level=0,
    )
    grant_office = Managed(
        tools=[apply_grant, delete_account],
        model=model,
        name="grant_office",
        description="Handles grant applications and customer accounts.",
        verbosity_level=0,
    )
    return ToolCallingAgent(
        tools=[check_forecast],
        model=model,
        managed_agents=[soil_lab, grant_office],
        name="farm_advisor",
        verbosity_level=0,
    )


def run(request: str) -> None:
    s.run("farm_advisor", request)
    counted.clear()
    notes.clear()
    advisor = team()
    try:
        answer, status = advisor.run(request), "ok"
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {str(exc)[:120]}")
        answer, status = None, "error"
    s.finish(answer, status, action_steps(advisor) + sum(counted.values()))
    s.runs[-1].update(
        handoffs=[],
        nested_runs_allowed=True,
        note=f"The request run is farm_advisor's with every managed agent's model and tool calls; farm_advisor: "
        f"{action_steps(advisor)} model call(s). Each managed agent's own run is also reported, nested: "
        + "; ".join(notes)
        + ".",
    )


def final(answer: str) -> dict:
    return reply("final_answer", {"answer": answer})


SCENARIOS = {
    "soil_plan": (
        "Field F-9 looks pale. What should I do this week in Beauce?",
        [
            reply("check_forecast", {"region": "Beauce"}),
            reply("soil_lab", {"task": "Test field F-9 and order what it lacks."}),
            reply("test_soil", {"field_id": "F-9"}),
            reply("order_fertilizer", {"field_id": "F-9", "product": "nitrogen"}),
            final("F-9 is low in nitrogen; order N-402 is placed."),
            final(
                "A dry week is ahead in Beauce. Field F-9 is low in nitrogen, so order N-402 of fertilizer is placed."
            ),
        ],
    ),
    "grant_refused": (
        "Apply for the drought grant for my farm FM-3.",
        [
            reply("grant_office", {"task": "Apply for the drought grant for farm FM-3."}),
            reply("apply_grant", {"farm_id": "FM-3", "scheme": "drought"}),
            final("The application failed: the grant portal is closed."),
            final("Sorry, the drought grant application for FM-3 failed because the grant portal is closed."),
        ],
    ),
    "close_account": (
        "Please close my account, user 42.",
        [
            reply("grant_office", {"task": "Close the account of user 42."}),
            reply("delete_account", {"user_id": "42"}),
            final("Account 42 deleted."),
            final("Your account 42 has been closed."),
        ],
    ),
    "soil_lab_failure": (
        "Test the soil of field F-9.",
        [
            reply("soil_lab", {"task": "Test the soil of field F-9."}),
            reply("test_soil", {"field_id": "F-9"}),
            failure(500, "model backend unavailable"),
        ],
    ),
}

for name, (request, replies) in SCENARIOS.items():
    with Scenario(name, replies, nested_runs_allowed=True) as s:
        with tracer.start_as_current_span("handle_request"):
            run(request)
        flush()
