"""vally's patterns are JavaScript regular expressions: they match as `RegExp.prototype.test` would."""

from __future__ import annotations

import pytest

from otelgrade.grade.graders.jsregex import JsRegexError, compile_js, compile_prefixed, js_number, js_stringify


def test_flags_behave_as_in_javascript() -> None:
    assert compile_js("paris", "i").test("PARIS")
    assert not compile_js("^b", "").test("a\nb")
    assert compile_js("^b", "m").test("a\nb")


def test_a_leading_flag_group_becomes_regexp_flags() -> None:
    assert compile_prefixed("(?i)booked").test("BOOKED UA123")


def test_dot_does_not_match_a_newline_without_s() -> None:
    assert not compile_js("a.b").test("a\nb")
    assert compile_js("a.b", "s").test("a\nb")


def test_a_pattern_javascript_rejects_is_an_error() -> None:
    with pytest.raises(JsRegexError):
        compile_js("(unclosed")


def test_values_are_stringified_as_json_stringify_would() -> None:
    assert js_stringify({"b": 1.0, "a": [True, None]}) == '{"b":1,"a":[true,null]}'
    assert js_number(1e21) == "1e+21"
    assert js_number(1e-7) == "1e-7"
