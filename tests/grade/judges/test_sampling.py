"""Which runs a sampled judge grades: stable across replicas and replays, nested as rates grow."""

from __future__ import annotations

from otelgrade.core.settings import SampleRates
from otelgrade.core.trajectory import Conversation, Trajectory
from otelgrade.grade.judges.sampling import is_sampled, sample_key, sample_point, sample_rate

TRACES = [f"{i:032x}" for i in range(2000)]


def test_the_share_sampled_is_the_rate() -> None:
    share = sum(is_sampled(t, "helpful", 0.1) for t in TRACES) / len(TRACES)
    assert 0.08 < share < 0.12


def test_a_run_sampled_at_one_rate_is_sampled_at_every_higher_one() -> None:
    low = {t for t in TRACES if is_sampled(t, "helpful", 0.05)}
    high = {t for t in TRACES if is_sampled(t, "helpful", 0.2)}
    assert low and low <= high


def test_the_point_is_stable_and_differs_between_graders() -> None:
    assert sample_point(TRACES[7].upper(), "helpful") == sample_point(TRACES[7], "helpful")
    assert sample_point(TRACES[7], "helpful") != sample_point(TRACES[7], "polite")


def test_the_most_specific_level_naming_the_environment_wins() -> None:
    judge = SampleRates.model_validate({"production": 0.05})
    suite = SampleRates.model_validate({"default": 0.5})
    assert sample_rate([judge, suite], "production") == 0.05
    assert sample_rate([judge, suite], "eval") == 0.5
    assert sample_rate([None, None], None) == 1.0


def test_a_conversation_is_sampled_by_its_id_so_a_resumed_one_is_judged_as_before() -> None:
    turn = Trajectory(trace_id="a" * 32, span_id="b" * 16)
    conversation = Conversation(trace_id="c" * 32, span_id="d" * 16, conversation_id="chat-1")
    assert sample_key(turn) == "a" * 32
    assert sample_key(conversation) == "conversation:chat-1"
