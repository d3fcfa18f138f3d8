"""The receivers running in this process, and a gRPC channel to them, for the receivers' tests."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from tests.receivers_harness import (
    InProcessReceivers,
)
from tests.senders import LIMIT


@pytest.fixture
def receivers() -> Iterator[InProcessReceivers]:
    running = InProcessReceivers(max_request_bytes=LIMIT)
    yield running
    running.close()


@pytest.fixture
def channel(receivers: InProcessReceivers) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(receivers.grpc_address) as ch:
        yield ch
