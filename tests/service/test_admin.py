"""The admin endpoint's address as alerts and messages link to it: the grades page's URL."""

from __future__ import annotations

from otelgrade.config import parse_config
from otelgrade.service.admin import pages_url


def test_the_page_is_where_the_metrics_endpoint_listens() -> None:
    assert pages_url(parse_config({"metrics": {"endpoint": "localhost:9464"}})) == "http://localhost:9464"


def test_an_external_url_is_what_people_reach() -> None:
    config = parse_config(
        {"metrics": {"endpoint": "0.0.0.0:9464"}, "ui": {"external_url": "https://grades.example.com/"}}
    )
    assert pages_url(config) == "https://grades.example.com"


def test_without_a_metrics_endpoint_there_is_no_page_unless_one_is_named() -> None:
    assert pages_url(parse_config({"metrics": {"endpoint": None}})) == ""
