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

from client import Scenario, each, failure
from client import tool as reply
from managed_agents import Ledger, Managed, run_manager
from smolagents import OpenAIServerModel, ToolCallingAgent, tool
from telemetry import flush, traced

tracer = traced("farm-desk")  # OpenLIT

model = OpenAIServerModel(
    model_id="gpt-4o-mini",
    api_base=os.environ["OPENAI_BASE_URL"],
    api_key=os.environ["OPENAI_API_KEY"],
    client_kwargs={"max_retries": 0},
)
s: Scenario  # the scenario being captured; every call goes into its request run
ledger = Ledger()  # what the managed agents did in the request being captured


@tool
def check_forecast(region: str) -> str:
    """The week's weather forecast for a farming region.

    Args:
        region: the region name
    """
    return s.ran("check_forecast", {"region": region}, f"{region}: dry week, 24C, no rain before Sunday")


@tool
def test_soil(field_id: str) -> str:
    """Lab analysis of a field's soil.

    Args:
        field_id: the field to analyse
    """
    return s.ran("test_soil", {"field_id": field_id}, f"{field_id}: pH 6.1, low nitrogen")


@tool
def order_fertilizer(field_id: str, product: str) -> str:
    """Order fertilizer for a field.

    Args:
        field_id: the field to deliver to
        product: the fertilizer to order
    """
    placed = f"order N-402 placed: {product} for {field_id}"
    return s.ran("order_fertilizer", {"field_id": field_id, "product": product}, placed)


@tool
def apply_grant(farm_id: str, scheme: str) -> str:
    """Apply for a farming grant.

    Args:
        farm_id: the applying farm
        scheme: the grant scheme
    """
    return s.ran("apply_grant", {"farm_id": farm_id, "scheme": scheme}, error="grant portal closed")


@tool
def delete_account(user_id: str) -> str:
    """Delete the customer's account.

    Args:
        user_id: the account to delete
    """
    return s.ran("delete_account", {"user_id": user_id}, f"account {user_id} deleted")


def team() -> ToolCallingAgent:
    soil_lab = Managed(
        tools=[test_soil, order_fertilizer],
        model=model,
        name="soil_lab",
        description="Analyses soil and orders fertilizer.",
        verbosity_level=0,
        ledger=ledger,
    )
    grant_office = Managed(
        tools=[apply_grant, delete_account],
        model=model,
        name="grant_office",
        description="Handles grant applications and customer accounts.",
        verbosity_level=0,
        ledger=ledger,
    )
    return ToolCallingAgent(
        tools=[check_forecast],
        model=model,
        managed_agents=[soil_lab, grant_office],
        name="farm_advisor",
        verbosity_level=0,
    )


def run(request: str) -> None:
    run_manager(team(), s, ledger, request)


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

for s, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (s: the scenario the tools record into)
    with tracer.start_as_current_span("handle_request"):
        run(request)
    flush()
