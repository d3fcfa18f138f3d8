"""JavaScript `RegExp` semantics in Python's regex syntax, run within `patterns`' time budget, for graders whose
reference system runs on Node (vally).

A JS pattern is translated once into an equivalent Python pattern: `$` only at the very end (or
before any line terminator with `m`), `.` excluding every JS line terminator, ASCII `\\d \\w \\b`, JS
`\\s`, Annex B literal escapes, and strings compared as UTF-16 code units. `JSON.stringify` is here
too, because vally matches some patterns against serialized values.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from otelgrade.core.patterns import Pattern, PatternError

_TERMINATORS = "\\n\\r\\u2028\\u2029"
_WORD = "A-Za-z0-9_"
_SPACE = "\\t\\n\\v\\f\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
# Class escapes as the inside of a Python character class (ASCII digits and word characters, JS whitespace).
_CLASS_ESCAPES = {"d": "0-9", "w": _WORD, "s": _SPACE}
_SIMPLE_ESCAPES = {"f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_QUANTIFIER = re.compile(r"\{(\d+)(,(\d*))?\}")
_FLAG_PREFIX = re.compile(r"^\(\?([a-zA-Z]+)\)")
_HEX2 = re.compile(r"[0-9A-Fa-f]{2}")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class JsRegexError(ValueError):
    """A pattern JavaScript would reject (a `SyntaxError` from `new RegExp`)."""


@dataclass(frozen=True)
class JsRegex:
    """A compiled JavaScript regular expression; `test` behaves as `RegExp.prototype.test` without `g`."""

    source: str
    flags: str
    _compiled: Pattern = field(repr=False, compare=False)

    def test(self, text: str) -> bool:
        return self._compiled.search(utf16_units(text)) is not None


def compile_js(source: str, flags: str = "") -> JsRegex:
    """Compile `source` with JS `flags` (`i`, `m`, `s`; `g` and `y` do not change `test` from a fresh regex)."""
    for flag in flags:
        if flag not in "imsgy" or flags.count(flag) > 1:
            raise JsRegexError(f"invalid regular expression flags {flags!r}")
    python = _Translator(source, flags).translate()
    try:
        compiled = Pattern(python, re.IGNORECASE if "i" in flags else 0)
    except PatternError as exc:
        raise JsRegexError(f"invalid regular expression /{source}/: {exc}") from None
    return JsRegex(source, flags, compiled)


def compile_prefixed(pattern: str) -> JsRegex:
    """vally's pattern fields: a leading `(?ims)`-style group becomes RegExp flags, the rest is the source."""
    match = _FLAG_PREFIX.match(pattern)
    if not match:
        return compile_js(pattern)
    flags = match.group(1)
    bad = sorted(set(flags) - set("ims"))
    if bad:
        raise JsRegexError(f"invalid inline flag(s) {''.join(bad)!r} in {pattern!r}; only i, m and s are supported")
    return compile_js(pattern[match.end() :], "".join(dict.fromkeys(flags)))


def utf16_units(text: str) -> str:
    """`text` with each character outside the BMP split into its surrogate pair, as JS strings hold it."""
    if not _ASTRAL.search(text):
        return text
    return _ASTRAL.sub(lambda m: _surrogates(ord(m.group())), text)


def _surrogates(code: int) -> str:
    code -= 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


# --- translation ------------------------------------------------------------------------------


class _Translator:
    """One left-to-right pass over a JS pattern (non-Unicode mode, with Annex B leniency)."""

    def __init__(self, source: str, flags: str) -> None:
        self.src = utf16_units(source)
        self.ignore_case = "i" in flags
        self.multiline = "m" in flags
        self.dot_all = "s" in flags
        self.pos = 0
        self.groups, self.named = _count_groups(self.src)
        self.out: list[str] = []

    def translate(self) -> str:
        src, out = self.src, self.out
        while self.pos < len(src):
            ch = src[self.pos]
            self.pos += 1
            if ch == "\\":
                out.append(self._escape())
            elif ch == "[":
                out.append(self._char_class())
            elif ch == "(":
                out.append(self._group_open())
            elif ch == ".":
                out.append("(?s:.)" if self.dot_all else f"[^{_TERMINATORS}]")
            elif ch == "^":
                out.append(f"(?<![^{_TERMINATORS}])" if self.multiline else "^")
            elif ch == "$":
                out.append(f"(?![^{_TERMINATORS}])" if self.multiline else r"\Z")
            elif ch in "*+?":
                out.append(ch + self._lazy())
            elif ch == "{":
                quantifier = _QUANTIFIER.match(src, self.pos - 1)
                if quantifier:
                    self.pos = quantifier.end()
                    low, high = quantifier.group(1), quantifier.group(3)
                    if high and int(high) < int(low):
                        raise JsRegexError(f"numbers out of order in {{}} quantifier in /{src}/")
                    out.append(quantifier.group() + self._lazy())
                else:
                    out.append(r"\{")
            elif ch in ")|":
                out.append(ch)
            else:
                out.append(re.escape(ch))
        return "".join(out)

    def _lazy(self) -> str:
        """An optional `?` making the quantifier lazy; another quantifier after it is a JS syntax error."""
        lazy = ""
        if self.pos < len(self.src) and self.src[self.pos] == "?":
            lazy = "?"
            self.pos += 1
        if self.pos < len(self.src) and (
            self.src[self.pos] in "*+?" or _QUANTIFIER.match(self.src, self.pos) is not None
        ):
            raise JsRegexError(f"nothing to repeat at position {self.pos} in /{self.src}/")
        return lazy

    def _group_open(self) -> str:
        src = self.src
        if not src.startswith("?", self.pos):
            return "("
        for opener in ("?:", "?=", "?!", "?<=", "?<!"):
            if src.startswith(opener, self.pos):
                self.pos += len(opener)
                return "(" + opener
        named = re.compile(r"\?<([A-Za-z_$][A-Za-z0-9_$]*)>").match(src, self.pos)
        if named:
            self.pos = named.end()
            return f"(?P<{_py_name(named.group(1))}>"
        raise JsRegexError(f"invalid group at position {self.pos - 1} in /{src}/")

    def _escape(self) -> str:
        src = self.src
        if self.pos >= len(src):
            raise JsRegexError(f"\\ at end of pattern /{src}/")
        ch = src[self.pos]
        self.pos += 1
        if ch in "dDwWsS":
            inner = _CLASS_ESCAPES[ch.lower()]
            cls = f"[{inner}]" if ch.islower() else f"[^{inner}]"
            return f"(?-i:{cls})" if self.ignore_case and ch in "wW" else cls
        if ch in "bB":
            word = f"(?-i:[{_WORD}])" if self.ignore_case else f"[{_WORD}]"
            if ch == "b":
                return f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
            return f"(?:(?<={word})(?={word})|(?<!{word})(?!{word}))"
        if ch in "123456789":
            digits = re.compile(r"\d*").match(src, self.pos - 1)
            assert digits is not None
            number = int(digits.group())
            if number <= self.groups:
                self.pos = digits.end()
                return f"(?:\\{number})"
            self.pos -= 1
            return re.escape(self._legacy_octal_or_digit())
        if ch == "k" and self.named:
            name = re.compile(r"<([A-Za-z_$][A-Za-z0-9_$]*)>").match(src, self.pos)
            if not name:
                raise JsRegexError(f"invalid named reference in /{src}/")
            self.pos = name.end()
            return f"(?P={_py_name(name.group(1))})"
        return re.escape(self._character_escape(ch, in_class=False))

    def _legacy_octal_or_digit(self) -> str:
        octal = re.compile(r"[0-7]{1,3}").match(self.src, self.pos)
        if octal:
            text = octal.group()
            while int(text, 8) > 0o377:
                text = text[:-1]
            self.pos += len(text)
            return chr(int(text, 8))
        self.pos += 1
        return self.src[self.pos - 1]  # \8 and \9 are the digits themselves

    def _character_escape(self, ch: str, in_class: bool) -> str:
        """The character an escape stands for (after the backslash and `ch` were read)."""
        src = self.src
        if ch in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[ch]
        if ch == "0" and not (self.pos < len(src) and src[self.pos].isdigit() and src[self.pos] in "01234567"):
            return "\0"
        if ch in "01234567" and (in_class or ch == "0"):
            self.pos -= 1
            return self._legacy_octal_or_digit()
        if ch == "c":
            if self.pos < len(src) and src[self.pos].isascii() and src[self.pos].isalpha():
                self.pos += 1
                return chr(ord(src[self.pos - 1]) % 32)
            if in_class and self.pos < len(src) and (src[self.pos].isdigit() or src[self.pos] == "_"):
                self.pos += 1
                return chr(ord(src[self.pos - 1]) % 32)
            self.pos -= 1  # `\c` not followed by a letter is a literal backslash
            return "\\"
        if ch == "x" and _HEX2.match(src, self.pos):
            self.pos += 2
            return chr(int(src[self.pos - 2 : self.pos], 16))
        if ch == "u" and _HEX4.match(src, self.pos):
            self.pos += 4
            return chr(int(src[self.pos - 4 : self.pos], 16))
        if ch == "b" and in_class:
            return "\b"
        return ch  # an identity escape: the character itself

    def _char_class(self) -> str:
        src = self.src
        negated = src.startswith("^", self.pos)
        if negated:
            self.pos += 1
        items: list[str] = []  # single characters, or a class escape as "\\d" etc.
        while True:
            if self.pos >= len(src):
                raise JsRegexError(f"unterminated character class in /{src}/")
            ch = src[self.pos]
            self.pos += 1
            if ch == "]":
                break
            if ch == "\\":
                if self.pos >= len(src):
                    raise JsRegexError(f"\\ at end of pattern /{src}/")
                esc = src[self.pos]
                self.pos += 1
                if esc in "dDwWsS":
                    items.append("\\" + esc)
                else:
                    items.append(self._character_escape(esc, in_class=True))
            else:
                items.append(ch)
        return _class_to_python(items, negated, self.ignore_case)


def _class_to_python(items: list[str], negated: bool, ignore_case: bool) -> str:
    parts: list[str] = []
    negatives: list[str] = []  # positive Python classes for \D \W \S, which cannot sit inside a class
    i = 0
    while i < len(items):
        item = items[i]
        if len(item) == 2 and item[0] == "\\":
            if item[1].islower():
                parts.append(_CLASS_ESCAPES[item[1]])
            else:
                negatives.append(f"[^{_CLASS_ESCAPES[item[1].lower()]}]")
            i += 1
            continue
        is_range = (
            i + 2 < len(items) and items[i + 1] == "-" and not (len(items[i + 2]) == 2 and items[i + 2][0] == "\\")
        )
        if is_range:
            low, high = item, items[i + 2]
            if ord(low) > ord(high):
                raise JsRegexError(f"range out of order in character class: {low!r}-{high!r}")
            parts.append(f"{_class_char(low)}-{_class_char(high)}")
            i += 3
        else:
            parts.append(_class_char(item))
            i += 1
    positive = f"[{''.join(parts)}]" if parts else None
    if not negatives:
        if positive is None:
            return "(?s:.)" if negated else "(?!)"
        return f"[^{''.join(parts)}]" if negated else positive
    if ignore_case:
        negatives = [f"(?-i:{n})" for n in negatives]
    if not negated:
        return "(?:" + "|".join(([positive] if positive else []) + negatives) + ")"
    lookaheads = "".join(f"(?!{p})" for p in ([positive] if positive else []) + negatives)
    return f"(?:{lookaheads}(?s:.))"


def _class_char(ch: str) -> str:
    return "\\" + ch if ch in "\\]^-[" else re.escape(ch) if ch in "&~|" else ch


def _py_name(name: str) -> str:
    return name.replace("$", "_S_")  # `$` is legal in JS group names, not in Python's


def _count_groups(src: str) -> tuple[int, bool]:
    """Capturing groups in a JS pattern, and whether any is named (which turns `\\k<...>` into a reference)."""
    count, named, i, in_class = 0, False, 0, False
    while i < len(src):
        ch = src[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            if not src.startswith("?", i + 1):
                count += 1
            elif src.startswith("?<", i + 1) and not src.startswith(("?<=", "?<!"), i + 1):
                count += 1
                named = True
        i += 1
    return count, named


# --- JSON.stringify ---------------------------------------------------------------------------


def js_stringify(value: Any) -> str:
    """`JSON.stringify(value)` for JSON-like Python values: compact, JS number formatting and key order."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_number(value) if math.isfinite(value) else "null"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        keys = [str(k) for k in value]
        index_keys = sorted((k for k in keys if _is_array_index(k)), key=int)
        ordered = index_keys + [k for k in keys if not _is_array_index(k)]
        by_key = {str(k): v for k, v in value.items()}
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{js_stringify(by_key[k])}" for k in ordered) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_stringify(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def js_number(value: float) -> str:
    """A finite float as JavaScript prints it (`1` for 1.0, `1e-7`, `1e+21`)."""
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    power = int(exponent)
    if -7 < power < 21:
        return format(Decimal(text), "f")
    return f"{mantissa}e{'+' if power > 0 else '-'}{abs(power)}"


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and (key == "0" or not key.startswith("0")) and int(key) < 2**32 - 1
