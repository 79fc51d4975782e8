"""The one way flashplan reads a file a user gives it, and the one error type for bad input.

Every document the project reads (scenarios, sweeps, plan requirements, calibration records,
catalog overrides, fio and iostat files, web-app uploads, ``--set`` values) comes through here,
so every reader has the same limits:

* size: at most ``max_bytes`` (1 MB for documents, 256 MiB for measurement files), read with a
  bounded ``read`` (a FIFO or a file that grows cannot make it read more);
* text: UTF-8 (a byte-order mark is dropped), or an error saying which byte is not;
* YAML: the safe loader only (libyaml's C parser when PyYAML has it, ``_YAML_BASE``, else the pure-Python
  one: the same documents, the same values, about ten times faster); duplicate keys are errors (not
  last-wins); anchors and aliases are counted *before* the document is built, with each alias adding the
  size of what it points to, so a "billion laughs" of a few hundred bytes is rejected without ever being
  expanded;
* JSON and TOML: duplicate keys are errors; nesting deeper than ``MAX_DEPTH`` is an error, not a
  RecursionError;
* values: only mappings, lists, strings, numbers, booleans and null; a date or ``!!binary``
  value, NaN or infinity, or an integer beyond 2**63 is rejected naming its field path.

``BadInput`` carries (field path, message) pairs; ``format_validation_error`` turns a pydantic
error into such pairs (with the allowed range and the value given); ``format_problems`` is the
single formatter of one line per problem that the CLI, the importers and the web app print.
"""

from __future__ import annotations

import errno
import json
import math
import os
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

MAX_DOCUMENT_BYTES = 1_000_000
"""Largest scenario, sweep, requirements, record or catalog file (the biggest shipped is 71 kB)."""
MAX_MEASUREMENT_BYTES = 256 * 1024 * 1024
"""Largest fio or iostat file: a day of 1-second ``iostat -x`` reports for a few devices fits easily."""
MAX_NODES = 200_000
"""Most values (mappings, lists, scalars) in one document, each alias counted as what it expands to."""
MAX_DEPTH = 64
"""Deepest nesting of mappings and lists (the deepest shipped document nests 7 levels)."""
MAX_INT = 2**63 - 1
"""Largest magnitude of an integer value (a run's seed is the largest field that needs it)."""
FORMATS = {".json": "json", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}


class BadInput(ValueError):
    """Problems with the user's input, as (field path, message) pairs: exit code 2 in the CLI,
    the same lines in the web app's forms."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = [(str(f), str(m)) for f, m in problems] or [("(input)", "invalid input")]
        super().__init__("; ".join(f"{f}: {m}" for f, m in self.problems))


def format_problems(problems: Iterable[tuple[str, str]]) -> list[str]:
    """One ``field.path: message`` line per problem (the form every entry point prints)."""
    return [f"{field}: {message}".replace("\n", " ") for field, message in problems]


def display_path(path: str | os.PathLike[str]) -> str:
    """A file name safe to print: undecodable bytes escaped, over-long names shortened."""
    text = os.fspath(path)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= 200 else text[:100] + "..." + text[-60:]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:60] + "...(" + str(len(text)) + " characters)"


# --- files -------------------------------------------------------------------------------------


def missing_reason(path: str | os.PathLike[str], kind: str = "file") -> str:
    """Why ``path`` does not lead to anything: a symlink loop, a symbolic link to nothing, or no such ``kind``."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop (a symbolic link on this path leads back to itself)"
        if os.path.islink(path):
            return f"symbolic link to a missing {kind} ({display_path(os.readlink(path))})"
    return f"no such {kind}"


def read_bytes(path: str | os.PathLike[str], max_bytes: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The content of a regular file of at most ``max_bytes``; BadInput naming the file otherwise."""
    shown = display_path(path)
    try:
        p = Path(path)
        if not p.exists():
            raise BadInput([(shown, missing_reason(p))])
        if not p.is_file():
            raise BadInput([(shown, "not a file")])
        with p.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except BadInput:
        raise
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise BadInput([(shown, f"cannot be read: {reason}")]) from None
    if len(data) > max_bytes:
        raise BadInput([(shown, f"file is larger than {max_bytes:,} bytes")])
    return data


def decode(data: bytes | str, origin: str) -> str:
    """UTF-8 text (a byte-order mark dropped); BadInput saying which byte is not UTF-8."""
    if isinstance(data, str):
        return data
    try:
        return bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput([(origin, f"not UTF-8 text (byte {exc.start} cannot be decoded)")]) from None


def document_format(path: str | os.PathLike[str]) -> str:
    """``yaml``, ``toml`` or ``json`` from the file's suffix; BadInput for any other suffix."""
    suffix = Path(path).suffix.lower()
    fmt = FORMATS.get(suffix)
    if fmt is None:
        raise BadInput([(display_path(path), f"unknown format {suffix!r}; use .yaml, .yml, .toml or .json")])
    return fmt


def read_document(path: str | os.PathLike[str], max_bytes: int = MAX_DOCUMENT_BYTES) -> dict[str, Any]:
    """Read a YAML, TOML or JSON file (format from its suffix) into checked plain data."""
    data = read_bytes(path, max_bytes)
    fmt = document_format(path)
    origin = display_path(path)
    return parse_document(decode(data, origin), fmt, origin, max_bytes)


# --- parsing -----------------------------------------------------------------------------------


_YAML_BASE: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""The safe loader the YAML reading builds on: libyaml's C parser with PyYAML's safe constructor (``CSafeLoader``)
when PyYAML was built with libyaml, else the pure-Python ``SafeLoader``. Both parse and construct YAML 1.1 alike;
only the wording of a syntax error differs."""


class _Loader(_YAML_BASE):  # type: ignore[valid-type,misc]
    """The safe loader (``_YAML_BASE``) with duplicate keys rejected and integers of more than 30 digits refused
    where they are written (Python would refuse beyond 4,300 digits without saying where)."""

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        digits = sum(ch.isdigit() for ch in str(node.value))
        if digits > 30:
            raise yaml.constructor.ConstructorError(
                None, None, f"integer too large ({digits} digits; at most {MAX_INT:,} in magnitude)", node.start_mark)
        return int(super().construct_yaml_int(node))

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:
                raise yaml.constructor.ConstructorError(None, None, "a mapping key must be a plain value",
                                                        key_node.start_mark) from None
            if duplicate:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)


def _yaml_precheck(text: str, origin: str) -> None:
    """Count values, nesting and alias expansion from the parser's events, before anything is built."""
    try:
        _count_events(yaml.parse(text, Loader=_YAML_BASE), origin)
    except yaml.YAMLError as exc:
        # libyaml refuses nesting beyond its own limit (1,000 levels) while it scans ahead of the events counted here
        if "maximum nesting depth" in str(exc):
            raise BadInput([(origin, f"nested more than {MAX_DEPTH} levels deep")]) from None
        raise


def _count_events(events: Iterable[yaml.Event], origin: str) -> None:
    """``_yaml_precheck``'s count over the parser's events: BadInput past MAX_DEPTH levels or MAX_NODES values."""
    nodes = 0
    depth = 0
    anchored: dict[str, int] = {}
    open_at: list[tuple[int, str | None]] = []
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            nodes += anchored.get(event.anchor or "", 1)
        elif isinstance(event, yaml.ScalarEvent):
            nodes += 1
            if event.anchor:
                anchored[event.anchor] = 1
        elif isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            nodes += 1
            depth += 1
            if depth > MAX_DEPTH:
                raise BadInput([(origin, f"nested more than {MAX_DEPTH} levels deep")])
            open_at.append((nodes, event.anchor))
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1
            start, anchor = open_at.pop()
            if anchor:
                anchored[anchor] = nodes - start + 1
        if nodes > MAX_NODES:
            raise BadInput([(origin, f"more than {MAX_NODES:,} values (aliases counted as what they expand to)")])


def _no_duplicate_json_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def parse_any(text: str, fmt: str, origin: str = "<input>", max_bytes: int = MAX_DOCUMENT_BYTES) -> Any:
    """Parse YAML (safe loader), TOML or JSON text into checked plain data of any shape."""
    if len(text) > max_bytes:
        raise BadInput([(origin, f"text is longer than {max_bytes:,} characters")])
    try:
        if fmt == "json":
            data = json.loads(text, object_pairs_hook=_no_duplicate_json_keys, parse_constant=_json_constant)
        elif fmt == "toml":
            data = tomllib.loads(text)
        else:
            _yaml_precheck(text, origin)
            data = yaml.load(text, Loader=_Loader)
    except BadInput:
        raise
    except (yaml.YAMLError, json.JSONDecodeError, tomllib.TOMLDecodeError, ValueError, TypeError) as exc:
        detail = " ".join(str(exc).split()).replace(' in "<unicode string>"', "")
        if "integer string conversion" in detail:
            raise BadInput([(origin, f"integer too large (at most {MAX_INT:,} in magnitude)")]) from None
        raise BadInput([(origin, f"not valid {fmt.upper()}: {detail}")]) from None
    except RecursionError:
        raise BadInput([(origin, f"nested more than {MAX_DEPTH} levels deep")]) from None
    check_tree(data, origin)
    return data


def parse_document(text: str, fmt: str, origin: str = "<input>", max_bytes: int = MAX_DOCUMENT_BYTES) -> dict[str, Any]:
    """Parse YAML, TOML or JSON text that must hold a mapping at the top level."""
    data = parse_any(text, fmt, origin, max_bytes)
    if data is None and fmt == "yaml":
        data = {}
    if not isinstance(data, dict):
        raise BadInput([(origin, f"expected a mapping at the top level, got {type(data).__name__}")])
    return data


def parse_value(raw: str, field: str) -> Any:
    """A ``--set`` value read as YAML (16, 0.7, true, [1, 2], raid10); text that is not YAML stays text."""
    if not raw.strip():
        return ""
    try:
        value = parse_any(raw, "yaml", field, max_bytes=100_000)
    except BadInput as exc:
        if any("not valid YAML" in m for _, m in exc.problems):
            return raw
        raise BadInput([(field, m) for _, m in exc.problems]) from None
    return value


# --- the values --------------------------------------------------------------------------------


def _leaf_problem(node: Any) -> str | None:
    """Why a value that is neither a mapping nor a list is refused (None: it is accepted)."""
    if node is None or isinstance(node, str | bool):
        return None
    if isinstance(node, int):
        if abs(node) > MAX_INT:
            return f"integer too large (at most {MAX_INT:,} in magnitude), got {len(str(abs(node)))} digits"
        return None
    if isinstance(node, float):
        return None if math.isfinite(node) else f"must be a finite number, got {node!r}"
    kind = type(node).__name__
    hint = "; quote it if you meant text" if kind in ("date", "datetime", "time") else ""
    return f"a {kind} value is not accepted here{hint}, got {_short(node)}"


def check_tree(data: Any, origin: str = "") -> None:
    """Reject what no flashplan field takes, naming its path: a date, bytes, a set, NaN or
    infinity, an integer beyond 2**63, a non-text key, nesting deeper than MAX_DEPTH, or more
    than MAX_NODES values. Iterative, and stops at the first MAX_NODES values, so shared
    (aliased) subtrees cost no more than their count."""
    problems: list[tuple[str, str]] = []
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    count = 0
    while stack:
        node, path, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise BadInput([(origin or "(document)", f"more than {MAX_NODES:,} values")])
        where = path or origin or "(document)"
        if isinstance(node, dict | list) and depth >= MAX_DEPTH:
            raise BadInput([(where, f"nested more than {MAX_DEPTH} levels deep")])
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, bool) or not isinstance(key, str | int):
                    problems.append((where, f"a key must be text, got {_short(key)}"))
                    continue
                stack.append((value, f"{path}.{key}" if path else str(key), depth + 1))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                stack.append((value, f"{path}.{i}" if path else str(i), depth + 1))
        else:
            problem = _leaf_problem(node)
            if problem is not None:
                problems.append((where, problem))
        if len(problems) >= 20:
            break
    if problems:
        raise BadInput(problems)


# --- pydantic errors ---------------------------------------------------------------------------

_UNION_TAGS = {"direct_nvme", "san", "exflash", "zvm_edev", "generic", "closed", "open", "bursty", "profile",
               "FlashDeviceSpec", "str", "function-after[_check(), DirectNvme]"}


def format_validation_error(exc: ValidationError, prefix: str = "") -> list[tuple[str, str]]:
    """Turn a pydantic error into (field.path, message) pairs a person can act on: the message
    states the allowed range or type, and the value given.

    Union-tag steps (``direct_nvme``) are dropped from paths; cross-field errors raised
    with ``models.common.field_problem`` are reported against the field they name.
    """
    problems: list[tuple[str, str]] = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"] if str(p) not in _UNION_TAGS and not str(p).startswith("function-")]
        message = err["msg"]
        ctx = err.get("ctx") or {}
        if err["type"] == "field_problem":
            loc.append(str(ctx["field"]))
            message = str(ctx["problem"])
        elif err["type"] == "extra_forbidden":
            message = "unknown field (check the spelling; `flashplan schema` lists the fields)"
        elif err["type"] == "union_tag_invalid":
            message = f"unknown kind {ctx.get('tag')!r}; allowed: {ctx.get('expected_tags')}"
        elif err["type"] == "union_tag_not_found":
            message = f"missing 'kind'; allowed: {ctx.get('expected_tags')}"
        elif message.startswith("Value error, "):
            message = message[len("Value error, "):]
        path = ".".join(([prefix] if prefix else []) + [p for p in loc if p]) or "(document)"
        if "input" in err and err["type"] not in ("field_problem", "missing", "extra_forbidden") and not isinstance(err["input"], dict | list):
            message = f"{message}, got {_short(err['input'])}"
        problems.append((path, message))
    # a str | FlashDeviceSpec union reports both branches; keep the first message per path
    seen: dict[str, str] = {}
    for path, message in problems:
        seen.setdefault(path, message)
    return list(seen.items())


def problems_of(exc: BaseException, prefix: str = "") -> list[tuple[str, str]]:
    """The (field, message) pairs of a BadInput or a pydantic ValidationError."""
    if isinstance(exc, ValidationError):
        return format_validation_error(exc, prefix)
    if isinstance(exc, BadInput):
        return exc.problems
    return [(prefix or "(input)", str(exc))]


def validate(model: Any, data: Any, prefix: str = "") -> Any:
    """``model.model_validate(data)`` with a ValidationError turned into BadInput."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise BadInput(format_validation_error(exc, prefix)) from None
