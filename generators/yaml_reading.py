"""The YAML half of gengap.generators.reading (its module doc states the rules): PyYAML's safe loader,
bounded, imported only when a YAML document is read."""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from gengap.generators.reading import MAX_NUMBER_DIGITS, MAX_YAML_BYTES, MAX_YAML_DEPTH, MAX_YAML_VALUES, ReadError


class _YamlRefused(yaml.constructor.ConstructorError):
    """A YAML value the reader does not accept (its message is the problem as is)."""

    def __init__(self, problem: str, node: yaml.Node) -> None:
        super().__init__(None, None, problem, node.start_mark)


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with timestamps read as strings, numbers bounded and a key twice in
one mapping refused (module doc)."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        text = str(node.value).lstrip("+-")
        digits = sum(c.isalnum() for c in text) - (2 if text[:2].lower() in ("0x", "0o", "0b") else 0)
        if digits > MAX_NUMBER_DIGITS:
            raise _YamlRefused(f"an integer has {digits:,} digits (at most {MAX_NUMBER_DIGITS} are read)", node)
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise _YamlRefused(f"{node.value} is not a finite number", node)
        return value

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """The mapping of node; _YamlRefused at the second of two equal keys (PyYAML keeps the
        last one silently). Keys a merge (``<<: *base``) brings in may still be overridden."""
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node)
                if key in seen:
                    raise _YamlRefused(f"the key {str(key)[:40]!r} appears twice in one mapping (a reader would keep one of them silently)", key_node)
                seen.add(key)
        return super().construct_mapping(node, deep)

    def construct_yaml_timestamp_text(self, node: yaml.ScalarNode) -> str:
        return str(self.construct_scalar(node))

    def construct_yaml_str(self, node: yaml.ScalarNode) -> str:
        value = super().construct_yaml_str(node)
        if _SURROGATE.search(value):  # "\ud83d\ude00" escapes a pair: one character; a lone one is no text
            value = value.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
            if _SURROGATE.search(value):
                raise _YamlRefused("a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not Unicode text", node)
        return value


_SURROGATE = re.compile("[\ud800-\udfff]")
_BoundedLoader.add_constructor("tag:yaml.org,2002:str", _BoundedLoader.construct_yaml_str)
_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)
_BoundedLoader.add_constructor("tag:yaml.org,2002:float", _BoundedLoader.construct_yaml_float)
_BoundedLoader.add_constructor("tag:yaml.org,2002:timestamp", _BoundedLoader.construct_yaml_timestamp_text)


def check_yaml_text(text: str, max_bytes: int = MAX_YAML_BYTES) -> None:
    """ReadError (naming the line) if the YAML text is too large, nested deeper than
    MAX_YAML_DEPTH, expands (through aliases) to more than MAX_YAML_VALUES values, or has an
    alias inside its own anchor. Found from the parser's events, before anything is built."""
    if len(text) > max_bytes:
        raise ReadError(f"the file has {len(text):,} characters; at most {max_bytes:,} are read")
    open_nodes: list[list] = [[None, 0]]  # [anchor, expanded values so far] per open collection; the root first
    sizes: dict[str, int] = {}
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = f"line {event.start_mark.line + 1}"
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            open_nodes.append([event.anchor, 1])
            if len(open_nodes) - 1 > MAX_YAML_DEPTH:
                raise ReadError(f"nesting deeper than {MAX_YAML_DEPTH} levels", line)
            continue
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, size = open_nodes.pop()
            if anchor is not None:
                sizes[anchor] = size
        elif isinstance(event, yaml.AliasEvent):
            if any(node[0] == event.anchor for node in open_nodes):
                raise ReadError(f"the alias *{event.anchor} refers to a value that contains it", line)
            size = sizes.get(event.anchor, 1)
        elif isinstance(event, yaml.ScalarEvent):
            size = 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        else:
            continue
        open_nodes[-1][1] += size
        if open_nodes[-1][1] > MAX_YAML_VALUES:
            raise ReadError(f"the document expands to more than {MAX_YAML_VALUES:,} values (YAML aliases?)", line)


def yaml_document(text: str, label: str = "", max_bytes: int = MAX_YAML_BYTES) -> tuple[Any, yaml.Node | None]:
    """(value, node tree) of one YAML document (the node tree gives line numbers); ReadError
    "<label> line N: ..." for anything the module doc refuses or malformed YAML."""
    try:
        check_yaml_text(text, max_bytes)
        loader = _BoundedLoader(text)
        try:
            node = loader.get_single_node()
            value = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except ReadError as err:
        raise ReadError(err.reason, f"{label} {err.where}".strip()) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{label} line {mark.line + 1}" if mark is not None else label
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ReadError(problem if isinstance(err, _YamlRefused) else f"malformed YAML: {problem}", where.strip()) from None
    except (ValueError, TypeError, RecursionError) as err:  # a constructor refusing a value PyYAML let through
        raise ReadError(f"malformed YAML: {err.__class__.__name__}", label) from None
    return value, node
