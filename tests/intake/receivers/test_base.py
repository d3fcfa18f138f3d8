"""What every receiver shares: addresses, the partial-success answer, and messages fit to send back."""

from __future__ import annotations

import pytest

from otelgrade.intake.receivers.base import (
    MAX_MESSAGE_CHARS,
    ExportResult,
    export_response,
    safe_message,
    split_address,
)


@pytest.mark.parametrize(
    ("address", "split"),
    [("localhost:4317", ("localhost", 4317)), ("[::1]:4318", ("::1", 4318)), (":9464", ("0.0.0.0", 9464))],
)
def test_addresses_read_as_host_and_port(address: str, split: tuple[str, int]) -> None:
    assert split_address(address) == split


def test_an_address_without_a_port_is_refused() -> None:
    with pytest.raises(ValueError, match="is not host:port"):
        split_address("localhost")


def test_a_partial_success_says_how_many_were_rejected_and_why() -> None:
    traces = export_response("traces", ExportResult(2, "2 spans without a trace id"))
    assert (traces.partial_success.rejected_spans, traces.partial_success.error_message) == (
        2,
        "2 spans without a trace id",
    )
    logs = export_response("logs", ExportResult(1, "bad"))
    assert logs.partial_success.rejected_log_records == 1
    assert not export_response("traces", ExportResult()).HasField("partial_success")


def test_a_message_sent_back_is_utf8_and_bounded() -> None:
    assert safe_message("bad \udc80 byte") == "bad ? byte"
    assert len(safe_message("x" * (MAX_MESSAGE_CHARS + 100))) == MAX_MESSAGE_CHARS + 3
