"""Suite configs: load YAML, validate against gengap/schemas/suite.schema.json, resolve entries.

A suite names a benchmark (name, version, seed, license, ...) and lists entries; each
entry becomes one release config ``<task>-<split>``. Entries come in three kinds:

- ``sampled_length``: strategy ``length`` with ``train_range``/``test_range`` (ranges of
  the task's size knob): each side is generated from its own range (Deletang et al.); a
  side may be a union ``[[lo, hi], ...]`` (gengap.splits.ranges: drawn evenly from its ranges; the
  report says which test ranges are interpolation and which extrapolation).
- ``sampled_level``: strategy ``difficulty`` with ``level_max``: train on levels
  1..level_max, test on the higher ones (``test_levels``).
  A sampled entry's ``options`` (optional) are gengap.splits.api.SampledOptions: how its
  compounds are read (``compounds``, ``local_size``, ``abstract_lexical``) and how its train
  records are chosen (``train_sampler: diverse``, ``sampler_candidates``).
- ``pool``: any strategy over a pool, ``pool: {n: N}`` generated examples or
  ``pool: all`` (every example of a finite task, e.g. SCAN); ``options`` are the
  strategy's options; ``sizes`` (optional) cap each part by a seeded subsample.
  ``pool: {n: N, shared: LABEL}``: the entries of a task naming one label (with the same
  params and n; checked here) split one pool drawn from the label's seed, each with its own
  split seed (gengap.release.pool_seed; CFQ's splits are splits of one dataset). An
  ``mcd`` entry whose ``options.compound_divergence`` is a list of targets is a sweep:
  one config per target, named ``<task>-<split>_dc<target x 1000, 4 digits>``; an ``iid``
  entry whose ``options.train_fraction`` is a list of training fractions likewise gives one
  config per fraction, named ``<task>-<split>_f<fraction x 1000, 4 digits>``; any pool
  entry whose ``options.exposure`` is a list of counts k gives one config per k, named
  ``<task>-<split>_k<k, 4 digits>``, all with the seed of ``<task>-<split>`` (same pool,
  same partition; the examples exposed for a smaller k are among a larger k's); a
  ``rule_holdout`` entry whose ``options.train_systems`` is a list of counts gives one config
  per count, named ``<task>-<split>_n<count, 4 digits>``.
- Any one-task entry whose ``params.lexicon`` is a list of lexicons k (tasks with lexical
  roles: gengap.generators.lexicons) gives one config per k, named
  ``<task>-<split>_lex<k, 4 digits>``, all with the seed of ``<task>-<split>``: a lexicon is a
  rendering, so every k draws the same examples and splits them alike (the split read from
  roles), written with lexicon k's words. Options that name roles (holdout's ``atom`` and
  ``template``) hold for every k; a holdout's ``primitive`` (an input: the atom by default) is
  written in lexicon k (``jump`` -> the word playing jump's role), as the resolved options show.
  A level split (its sides take no parameters) and a category split with exposure examples
  (written in lexicon 0) refuse a lexicon k > 0.
- ``multitask``: ``tasks`` (instead of ``task``) pools several tasks, each with its own
  parameters, into one config ``multi-<split>`` (gengap.multitask; e.g. strategy
  ``task_holdout``: whole tasks held out for test).

Any entry may add ``cue: {train: RATE, test: RATE}``: shortcut cues on its finished parts
(gengap.splits.cues).

``plugins`` (optional) lists modules imported before the entries are resolved, each
registering tasks (gengap.generators.plugins); the manifest of a release records which plugin
(and distribution version) provides each task it uses.

Errors name the config file, the line and the offending key (SuiteError). A suite's problems
come all at once: every violation of the schema, every plugin that cannot be imported and the
first problem of each entry (its task, split, parameters, ranges, sizes, options), in one line
``FILE: N problems: line L: KEY: MESSAGE; ...`` (one problem: ``FILE line L: KEY: MESSAGE``).
"""

from __future__ import annotations

import copy
import difflib
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from gengap.generators import ParamError, Params, Task, UnknownTaskError, get_task
from gengap.generators.lexicons import KEY as LEXICON, MAX_LEXICON, lexicon_of
from gengap.generators.plugins import PluginError, import_module
from gengap.generators.reading import ReadError, read_text, yaml_document
from gengap.releases.multitask import component_records, is_multitask, resolve_multitask_entry, written_records
from gengap.ground.limits import MAX_SUITE_BYTES, LimitError, RecordLimit, check_records, check_total, record_bytes
from gengap.releases.schema import schema_errors, python_validator
from gengap.splits import SplitError, get_strategy, make_options
from gengap.splits.api import sampled_options, strategy_problem
from gengap.splits.cues import cue_option
from gengap.splits.ranges import check_disjoint, is_union, parse_ranges

DEFAULT_SUITE = "gengap-core"
SAMPLED_DEFAULT_VALIDATION = 0.1


class SuiteError(ValueError):
    """A suite config is malformed or asks for something impossible."""


class _PlainDumper(yaml.SafeDumper):
    """YAML without anchors and aliases (the manifest's suite is plain JSON data)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def default_suite_text() -> str:
    return resources.files("gengap").joinpath(f"suites/{DEFAULT_SUITE}.yaml").read_text()


def shipped_suites() -> list[str]:
    """Names of the suites shipped in the package (gengap/suites/<name>.yaml)."""
    folder = resources.files("gengap").joinpath("suites")
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


def is_shipped_suite(path: str) -> bool:
    """Whether path is one of the suite files shipped in the package (gengap/suites/<name>.yaml)."""
    folder = Path(str(resources.files("gengap").joinpath("suites"))).resolve()
    return Path(path).resolve().parent == folder and Path(path).name[: -len(".yaml")] in shipped_suites()


def find_suite(name: str) -> str:
    """The suite file at name, or the shipped suite of that name (as sweeps are found:
    gengap.sweep_config.find_sweep); SuiteError naming the shipped ones otherwise."""
    if Path(name).exists() or name.endswith((".yaml", ".yml")) or "/" in name or "\\" in name:
        return name
    names = shipped_suites()
    if name in names:
        return str(resources.files("gengap").joinpath(f"suites/{name}.yaml"))
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    guess = f"did you mean {close[0]}? " if close else ""
    raise SuiteError(f"{name} is neither a suite file nor a shipped suite ({guess}shipped: {', '.join(names)}; gengap release --list)")


def shipped_suite_lines() -> list[str]:
    """One line per shipped suite: its name (what `gengap release NAME` takes; the default marked), version, configs and the start of its description."""
    rows = []
    for name in shipped_suites():
        suite = load_suite(find_suite(name))
        about = " ".join(str(suite.get("description") or "").split())
        about = ("(the default) " if name == DEFAULT_SUITE else "") + about
        rows.append((name, str(suite["version"]), len(suite["entries"]), about if len(about) <= 90 else about[:87] + "..."))
    width = max(len(row[0]) for row in rows)
    return [f"{name:<{width}}  {version:<6}  {configs:>3} config{'s' if configs != 1 else ' '}  {about}" for name, version, configs, about in rows]


def _line_of(node: yaml.Node | None, path: list[Any]) -> int | None:
    """1-based line of the YAML node at a JSON path (the deepest node found)."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in path:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == key), None)
            if match is None:
                match_key = next((k for k, v in node.value if k.value == key), None)
                return match_key.start_mark.line + 1 if match_key is not None else line
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            break
        line = node.start_mark.line + 1
    return line


def _where(path: list[Any]) -> str:
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return text or "suite"


class YamlSource:
    """The parsed YAML document with its node tree, for line numbers in errors.

    Read by gengap.generators.reading (bounded: size, depth, aliases, numbers; timestamps stay
    strings). Errors are raised as ``error_type`` (SuiteError for suites; other YAML
    configs, such as sweep files, pass their own ValueError subclass).
    """

    def __init__(self, text: str, label: str, error_type: type[ValueError] = SuiteError) -> None:
        self.label = label
        self.error_type = error_type
        try:
            self.data, self.node = yaml_document(text, label)
        except ReadError as err:
            raise error_type(str(err) if err.where else f"{label}: {err.reason}") from None

    def error(self, path: list[Any], message: str) -> ValueError:
        line = _line_of(self.node, path)
        where = f" line {line}" if line is not None else ""
        return self.error_type(f"{self.label}{where}: {_where(path)}: {message}")

    def _line_in(self, message: str) -> int:
        """The line a message of :meth:`error` names (0 for a message without one)."""
        head = f"{self.label} line "
        digits = message[len(head):].split(":", 1)[0] if message.startswith(head) else ""
        return int(digits) if digits.isdigit() else 0

    def all_errors(self, errors: list[ValueError]) -> ValueError:
        """One error of several (each made by :meth:`error`, or any message): one as it is, more as
        ``LABEL: N problems: line L: KEY: MESSAGE; ...`` (each problem once, in order)."""
        messages = sorted(dict.fromkeys(str(err) for err in errors), key=self._line_in)  # in line order (stable)
        if len(messages) == 1:
            return self.error_type(messages[0])
        own = [m[len(self.label):].lstrip(" :") if m.startswith(self.label) else m for m in messages]
        return self.error_type(f"{self.label}: {len(own)} problems: " + "; ".join(own))


def load_suite(path: str | Path | None = None, limit: RecordLimit | None = None) -> dict[str, Any]:
    """Load and resolve a suite config file (the embedded default suite when path is None).

    The file is read up to MAX_SUITE_BYTES (so a pipe or a device cannot make it grow
    without bound) and must be UTF-8; see parse_suite for limit.
    """
    if path is None:
        return parse_suite(default_suite_text(), f"<{DEFAULT_SUITE}>", limit)
    return parse_suite(read_config_text(path), str(path), limit)


def read_config_text(path: str | Path, what: str = "suite config", error_type: type[ValueError] = SuiteError) -> str:
    """The UTF-8 text of a YAML config file, read up to MAX_SUITE_BYTES; error_type otherwise."""
    try:
        return read_text(path, what, MAX_SUITE_BYTES)
    except ReadError as err:
        raise error_type(str(err)) from None


def parse_suite(text: str, label: str = "<suite>", limit: RecordLimit | None = None) -> dict[str, Any]:
    """Validate a suite config text and return the resolved suite (see resolve_suite).

    The text must pass gengap.generators.reading's YAML bounds (size, depth, what aliases expand to)
    and every entry the record limit (check_suite_limits).
    """
    source = YamlSource(text, label)
    if not isinstance(source.data, dict):
        raise SuiteError(f"{label}: a suite config is a YAML mapping")
    problems = schema_problems(source, "suite")
    if problems:  # the entries the schema accepts are resolved too, so that their problems come in the same run
        broken = {path[1] for path, _ in problems if len(path) > 1 and path[0] == "entries"}
        errors = [source.error(path, message) for path, message in problems]
        if isinstance(source.data.get("entries"), list) and not any(path[:1] == ["plugins"] for path, _ in problems):
            errors += _resolve_entries(source.data, source, skip=broken)[1]
            for index in sorted(i for i in broken if isinstance(i, int) and i < len(source.data["entries"])):  # their names are checked still
                refused = frozenset(str(path[2]) for path, _ in problems if len(path) > 2 and path[:2] == ["entries", index])
                errors += name_problems(source.data["entries"][index], ["entries", index], source, refused)
        raise source.all_errors(errors)
    suite = resolve_suite(source.data, source)
    check_suite_limits(suite, limit, source)
    return suite


def validate_yaml_schema(source: YamlSource, schema: str) -> None:
    """source.all_errors of every violation of gengap/schemas/<schema>.schema.json, each at its line."""
    problems = schema_problems(source, schema)
    if problems:
        raise source.all_errors([source.error(path, message) for path, message in problems])


def schema_problems(source: YamlSource, schema: str) -> list[tuple[list[Any], str]]:
    """(path, message) of every violation of gengap/schemas/<schema>.schema.json, in path order."""
    def order(error: Any) -> list[tuple[int, Any]]:  # indices and keys may meet at one depth: never compared with each other
        return [(0, key) if isinstance(key, int) else (1, str(key)) for key in error.absolute_path]

    problems = []
    for error in sorted(python_validator(schema).iter_errors(_jsonable(source.data)), key=order):
        path = list(error.absolute_path)
        message = error.message
        if error.validator == "additionalProperties":
            extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            if extra:
                path = path + [extra[0]]
                message = f"unknown key {extra[0]!r}" if len(extra) == 1 else "unknown keys " + ", ".join(map(repr, extra))
                close = difflib.get_close_matches(str(extra[0]), sorted(error.schema.get("properties", {})), n=1, cutoff=0.75)
                if len(extra) == 1 and close:
                    message += f" (did you mean {close[0]}?)"
        elif error.validator == "oneOf" and all(set(option) == {"required"} for option in error.validator_value):
            keys = [option["required"][0] for option in error.validator_value]  # e.g. task or tasks (gengap.multitask)
            message = f"give exactly one of {' and '.join(keys)}"
        elif error.validator == "enum" and isinstance(error.instance, str):
            close = difflib.get_close_matches(error.instance, [str(v) for v in error.validator_value], n=1, cutoff=0.75)
            if close:
                message += f" (did you mean {close[0]}?)"
        elif error.validator == "pattern" and path and path[-1] in ("name", "split", "task"):
            message = f"{error.instance!r} is not a safe name (lowercase letters, digits and _ only)"
        problems.append((path, message))
    return problems


def _jsonable(value: Any) -> Any:
    """YAML values as JSON types (dates become ISO strings)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, date):
        return value.isoformat()
    return value


def resolve_suite(data: dict[str, Any], source: YamlSource | None = None) -> dict[str, Any]:
    """The suite with defaults filled in and every entry resolved and checked.

    The result is plain JSON data (it goes into manifest.json); its "config" is the input
    config with "created" filled in, which `gengap verify --regenerate` feeds back here to
    rebuild a release.
    """
    data = _jsonable(copy.deepcopy(data))
    if source is None:
        source = YamlSource(yaml.dump(data, Dumper=_PlainDumper, sort_keys=False), "<manifest suite>")
        errors = schema_errors(data, "suite")
        if errors:
            raise SuiteError(f"suite in manifest: {errors[0]}")
    errors: list[ValueError] = []
    if data.get("created"):
        try:
            date.fromisoformat(str(data["created"]))
        except ValueError:
            errors.append(source.error(["created"], f"{data['created']!r} is not a date (YYYY-MM-DD)"))
    entries, entry_errors = _resolve_entries(data, source)
    if errors + entry_errors:
        raise source.all_errors(errors + entry_errors)
    config = dict(data)
    config["created"] = data.get("created") or date.today().isoformat()
    suite = {
        "config": config,
        "name": data["name"],
        "pretty_name": data.get("pretty_name", data["name"]),
        "version": data["version"],
        "description": data.get("description", ""),
        "seed": data["seed"],
        "license": data["license"],
        "created": config["created"],
        "homepage": data.get("homepage", ""),
        "authors": data.get("authors") or [{"name": "gengap contributors"}],
        "entries": entries,
    }
    return suite


def _resolve_entries(data: dict[str, Any], source: YamlSource, skip: set[Any] = frozenset()) -> tuple[list[dict[str, Any]], list[ValueError]]:
    """The resolved entries of a suite (its plugins imported first) and the errors found: the
    plugins that cannot be imported (then no entry is resolved: their tasks would all be unknown),
    or each entry's first problem (entries in skip are left out: the schema already refused them)."""
    errors = plugin_errors(data.get("plugins") or [], source)
    if errors:
        return [], errors
    resolved_entries: list[dict[str, Any]] = []
    names: dict[str, int] = {}
    pools: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}  # (task, shared label) -> (first entry, its params and n)
    for index, entry in enumerate(data["entries"]):
        if index in skip:
            continue
        try:
            for expanded in _expand_targets(entry, ["entries", index], source):
                resolved = _resolve_entry(expanded, ["entries", index], source)
                if resolved["name"] in names:
                    raise source.error(["entries", index, "split"], f"config {resolved['name']!r} appears twice (entries {names[resolved['name']]} and {index})")
                _check_shared_pool(resolved, index, pools, source)
                names[resolved["name"]] = index
                resolved_entries.append(resolved)
        except EntryProblems as err:
            errors.extend(err.errors)
        except SuiteError as err:
            errors.append(err)
    return resolved_entries, errors


def shared_pool(entry: dict[str, Any]) -> str | None:
    """The label of a resolved one-task pool entry's shared pool (``pool: {n: N, shared: LABEL}``), else None."""
    pool = entry.get("pool")
    return pool.get("shared") if entry.get("kind") == "pool" and isinstance(pool, dict) else None


def _check_shared_pool(resolved: dict[str, Any], index: int, pools: dict[tuple[str, str], tuple[int, dict[str, Any]]], source: YamlSource) -> None:
    """SuiteError unless a shared pool's entries agree on what it holds: the first entry naming
    (task, label) fixes its params and n; a later one that differs is refused at its label. The
    lexicon may differ: it renders the same examples in other words (a lexicon sweep shares a pool)."""
    label = shared_pool(resolved)
    if label is None:
        return
    key = (resolved["task"], label)
    what = {"params": {k: v for k, v in resolved["params"].items() if k != LEXICON}, "n": resolved["pool"]["n"]}
    first = pools.setdefault(key, (index, what))
    if first[1] != what:
        differs = "n" if first[1]["n"] != what["n"] else "params"
        raise source.error(["entries", index, "pool", "shared"],
                           f"pool {label!r} of {resolved['task']} is drawn by entry {first[0]} with other {differs}: "
                           "entries that share a pool need the same params and n (or another label)")


def plugin_errors(modules: list[str], source: YamlSource) -> list[ValueError]:
    """Import the suite's ``plugins`` (modules that register tasks) before its entries are
    resolved; the error of each module that cannot be imported, at its line."""
    errors = []
    for index, module in enumerate(modules):
        try:
            import_module(module)
        except PluginError as err:
            errors.append(source.error(["plugins", index], str(err)))
    return errors


SWEPT_OPTIONS = {  # an option whose value may be a list: one config per value, named <split><suffix><4 digits of value x scale>
    # option: (suffix, what, (exclusive lower bound, upper bound), scale)
    "compound_divergence": ("_dc", "targets", (0.0, 1.0), 1000),  # graded MCD (Keysers et al.)
    "train_fraction": ("_f", "training fractions", (0.0, 0.99), 1000),  # grokking's training fraction (Power et al.)
    "exposure": ("_k", "exposure counts", (-1, 1_000_000), 1),  # k test-side examples moved into train (gengap.splits.exposure)
    "train_systems": ("_n", "train system counts", (0, 10**9), 1),  # rule_holdout's instruction diversity (gengap.splits.rules)
}
SHARED_SEED_OPTIONS = ("exposure", "train_systems")  # the configs of these sweeps share the seed of the unswept name: same pool and split
LEXICON_SUFFIX = "_lex"  # a sweep of params.lexicon: <split>_lex<4 digits of k>, the seed of <split>


def target_split_name(split_name: str, target: float, option: str = "compound_divergence") -> str:
    """The split name of one value of a swept option: <split>_dc<4 digits of 1/1000> for an MCD
    target (0.3 -> mcd_dc0300), <split>_f<...> for a training fraction, <split>_k<4 digits> for
    an exposure count (16 -> holdout_k0016), <split>_n<4 digits> for a number of train systems
    (8 -> rule_holdout_n0008), so configs sort by value."""
    suffix, _, _, scale = SWEPT_OPTIONS[option]
    return f"{split_name}{suffix}{round(target * scale):04d}"


def _expand_targets(entry: dict[str, Any], path: list[Any], source: YamlSource) -> list[dict[str, Any]]:
    """An entry whose options.compound_divergence, options.train_fraction or options.exposure, or
    whose params.lexicon, is a list becomes one entry per value (an exposure or lexicon sweep's
    entries keep the unswept config's seed under ``seed_split``)."""
    options = entry.get("options") or {}
    swept = [name for name in SWEPT_OPTIONS if isinstance(options.get(name), list)]
    if isinstance((entry.get("params") or {}).get(LEXICON), list):
        if swept:
            raise source.error(path + ["params", LEXICON], f"sweep one option at a time, not lexicon and {swept[0]}")
        return _expand_lexicons(entry, path + ["params", LEXICON], source)
    if not swept:
        return [entry]
    if len(swept) > 1:
        raise source.error(path + ["options"], f"sweep one option at a time, not {' and '.join(swept)}")
    option = swept[0]
    _, what, (lo, hi), scale = SWEPT_OPTIONS[option]
    values = options[option]
    where = path + ["options", option]
    counts = scale == 1
    number = (lambda t: isinstance(t, int)) if counts else (lambda t: isinstance(t, (int, float)))
    if not values or not all(number(t) and not isinstance(t, bool) and lo < t <= hi for t in values):
        kind = f"integers in [{lo + 1}, {hi:,}]" if counts else f"numbers in ({lo:g}, {hi:g}]"
        raise source.error(where, f"a sweep of {what} is a non-empty list of {kind}")
    names = [target_split_name(entry["split"], float(t), option) for t in values]
    if len(set(names)) != len(names):
        raise source.error(where, f"{what} must differ" + ("" if counts else " by at least 0.001"))
    shared = {"seed_split": entry["split"]} if option in SHARED_SEED_OPTIONS else {}
    return [
        {**entry, "split": name, "strategy": entry.get("strategy") or entry["split"],
         "options": {**options, option: t if counts else float(t)}, **shared}
        for name, t in zip(names, values)
    ]


def _expand_lexicons(entry: dict[str, Any], where: list[Any], source: YamlSource) -> list[dict[str, Any]]:
    """An entry whose params.lexicon is a list: one entry per lexicon k, named
    <split>_lex<k, 4 digits>, each with the seed of the unswept config (``seed_split``)."""
    values = entry["params"][LEXICON]
    if not values or not all(isinstance(k, int) and not isinstance(k, bool) and 0 <= k <= MAX_LEXICON for k in values):
        raise source.error(where, f"a sweep of lexicons is a non-empty list of integers in [0, {MAX_LEXICON:,}]")
    if len(set(values)) != len(values):
        raise source.error(where, "lexicons must differ")
    return [
        {**entry, "split": lexicon_split_name(entry["split"], k), "strategy": entry.get("strategy") or entry["split"],
         "params": {**entry["params"], LEXICON: k}, "seed_split": entry["split"]}
        for k in values
    ]


def lexicon_split_name(split_name: str, lexicon: int) -> str:
    """The split name of one lexicon of a sweep: <split>_lex<4 digits> (addprim_jump, 3 -> addprim_jump_lex0003)."""
    return f"{split_name}{LEXICON_SUFFIX}{lexicon:04d}"


def _lexicon_problem(params: Params, entry: dict[str, Any]) -> str | None:
    """Why an entry cannot be written in its lexicon k > 0 (None: it can, or k is 0): a level
    split's sides take no parameters."""
    index = getattr(params, LEXICON, 0)
    if index and "level_max" in entry:
        return "a level split draws its sides from the task's levels, which take no lexicon: use a pool or train_range/test_range"
    return None


def _in_lexicon(task: Task, params: Params, strategy: str, options: dict[str, Any]) -> dict[str, Any]:
    """A pool split's options with the inputs they name written in the params' lexicon: a holdout's
    bare primitives (``primitive``, by default its one atom) are inputs; atoms and templates name
    roles and stay. The options themselves for lexicon 0 or another strategy."""
    index = getattr(params, LEXICON, 0)
    if not index or strategy != "holdout":
        return options
    atom = str(options.get("atom") or "")
    primitive = str(options.get("primitive") or (atom if atom and "+" not in atom else ""))
    if not primitive:
        return options
    lexicon = lexicon_of(task.lexicon_spec, index)  # type: ignore[attr-defined]
    return {**options, "primitive": "|".join(lexicon.write(text) for text in primitive.split("|") if text)}


class EntryProblems(SuiteError):
    """Several independent problems of one entry (its task and its strategy names), each a SuiteError of its line."""

    def __init__(self, errors: list[ValueError]) -> None:
        super().__init__("; ".join(str(err) for err in errors))
        self.errors = errors


def name_problems(entry: Any, path: list[Any], source: YamlSource, skip: frozenset[str] = frozenset()) -> list[ValueError]:
    """The problems of an entry's names, which do not depend on each other: an unknown task, a
    split or strategy that names no strategy (each with the closest names). A multi-task entry's
    names are its resolution's; keys in skip (those the schema refused) are not read."""
    if not isinstance(entry, dict) or is_multitask(entry):
        return []
    problems: list[ValueError] = []
    if "task" not in skip and isinstance(entry.get("task"), str):
        try:
            get_task(entry["task"])
        except UnknownTaskError as err:
            problems.append(source.error(path + ["task"], str(err)))
    named = "strategy" if entry.get("strategy") else "split"
    if named not in skip and "split" not in skip and isinstance(entry.get(named), str):
        problem = strategy_problem(entry)
        if problem:
            problems.append(source.error(path + [problem[0]], problem[1]))
    return problems


def _resolve_entry(entry: dict[str, Any], path: list[Any], source: YamlSource) -> dict[str, Any]:
    if is_multitask(entry):
        return resolve_multitask_entry(entry, path, source.error)
    problems = name_problems(entry, path, source)
    if problems:
        raise problems[0] if len(problems) == 1 else EntryProblems(problems)
    task = get_task(entry["task"])
    strategy = get_strategy(entry.get("strategy") or entry["split"])
    try:
        params = task.make_params(entry.get("params") or {}, level=entry.get("level"))
    except ParamError as err:
        raise source.error(path + ["params"], str(err)) from None
    problem = _lexicon_problem(params, entry)
    if problem:
        raise source.error(path + ["params", LEXICON], problem)
    sampled_length = "train_range" in entry or "test_range" in entry
    sampled_level = "level_max" in entry
    if sampled_length and sampled_level:
        raise source.error(path, "give either train_range/test_range or level_max, not both")
    resolved: dict[str, Any] = {
        "name": f"{task.name}-{entry['split']}",
        "task": task.name,
        "split": entry["split"],
        "strategy": strategy.name,
        "params": params.to_dict(),
        "base_params": dict(entry.get("params") or {}),
        "level": entry.get("level"),
    }
    if "seed_split" in entry:  # an exposure, train_systems or lexicon sweep: every value draws the unswept config's pool and split
        resolved["seed_of"] = f"{task.name}-{entry['seed_split']}"
    sizes = dict(entry.get("sizes") or {})
    if sampled_length or sampled_level:
        if "pool" in entry:
            raise source.error(path + ["pool"], "a sampled split generates its own sides: drop pool")
        for part in ("train", "test"):
            if sizes.get(part, 0) < 1:
                raise source.error(path + ["sizes"], f"a sampled split needs sizes.{part} >= 1")
        sizes.setdefault("validation", int(round(SAMPLED_DEFAULT_VALIDATION * sizes["train"])))
        resolved["sizes"] = sizes
    if sampled_length:
        if strategy.name != "length":
            raise source.error(path + ["strategy"], "train_range/test_range need strategy length")
        if "train_range" not in entry or "test_range" not in entry:
            raise source.error(path, "a sampled length split needs both train_range and test_range")
        train_range, test_range = entry["train_range"], entry["test_range"]
        sides = {}
        for key, bounds in (("train_range", train_range), ("test_range", test_range)):
            if len(bounds) == 2 and all(isinstance(b, int) for b in bounds) and bounds[0] > bounds[1]:
                raise source.error(path + [key], f"range {bounds} is empty")
            try:
                sides[key] = parse_ranges(bounds, key)
            except SplitError as err:
                raise source.error(path + [key], str(err)) from None
        if not is_union(*sides.values()) and train_range[1] >= test_range[0] and test_range[1] >= train_range[0]:
            raise source.error(path + ["test_range"], f"test range {test_range} overlaps train range {train_range}")
        try:
            check_disjoint(sides["train_range"], sides["test_range"])
        except SplitError as err:
            raise source.error(path + ["test_range"], str(err)) from None
        try:
            for side in sides.values():
                for bounds in side:
                    task.with_size(*bounds).replace(**resolved["base_params"])
        except ParamError as err:
            raise source.error(path + ["train_range"], str(err)) from None
        resolved.update(kind="sampled_length", train_range=copy.deepcopy(train_range), test_range=copy.deepcopy(test_range))
    elif sampled_level:
        if strategy.name != "difficulty":
            raise source.error(path + ["strategy"], "level_max needs strategy difficulty")
        tests = entry.get("test_levels") or list(range(entry["level_max"] + 1, 11))
        if any(k <= entry["level_max"] for k in tests):
            raise source.error(path + ["test_levels"], f"test levels must exceed level_max={entry['level_max']}")
        resolved.update(kind="sampled_level", level_max=entry["level_max"], test_levels=tests)
    else:
        if "pool" not in entry:
            raise source.error(path, "give a pool (n examples or all), or train_range/test_range, or level_max")
        if entry["pool"] == "all" and type(task).enumerate is Task.enumerate:
            raise source.error(path + ["pool"], f"task {task.name} cannot enumerate all its examples: give pool.n")
        try:
            options = make_options(strategy, _in_lexicon(task, params, strategy.name, entry.get("options") or {}))
        except SplitError as err:
            raise source.error(path + ["options"], str(err)) from None
        resolved.update(kind="pool", pool=entry["pool"], options=options.to_dict(), sizes=sizes)
    if (sampled_length or sampled_level) and "options" in entry:  # how compounds are read, how train is sampled
        try:
            resolved["options"] = sampled_options(entry["options"] or {}).to_dict()
        except SplitError as err:
            raise source.error(path + ["options"], str(err)) from None
    if "cue" in entry:  # shortcut cues, any kind of split (gengap.splits.cues)
        try:
            resolved["cue"] = cue_option(entry["cue"]).to_dict()
        except SplitError as err:
            raise source.error(path + ["cue"], str(err)) from None
    return resolved


class SuiteLimitError(SuiteError):
    """A suite asks for more records (or data) than the limits allow (gengap.limits)."""


def _entry_records(resolved: dict[str, Any]) -> tuple[int, int, list[str], Params]:
    """(records built, records written, the suite key that sets them, the parameters whose
    records size them) of a resolved entry; ParamError when its task refuses to enumerate."""
    task = get_task(resolved["task"])
    if resolved["kind"] == "pool":
        params = task.make_params(resolved["params"])
        if resolved["pool"] == "all":
            n, key = task.enumeration_size(params) or 0, ["pool"]
        else:
            n, key = resolved["pool"]["n"], ["pool", "n"]
        sizes = resolved.get("sizes") or {}
        written = min(n, sum(sizes.values())) if all(part in sizes for part in ("train", "validation", "test")) else n
        return n, written, key, params
    n = sum(resolved["sizes"].values())
    if resolved["kind"] == "sampled_length":
        params = task.with_size(*parse_ranges(resolved["test_range"], "test_range")[-1]).replace(**resolved["base_params"])
    else:
        params = task.level(max(resolved["test_levels"]))
    return n, n, ["sizes"], params


def check_suite_limits(suite: dict[str, Any], limit: RecordLimit | None = None, source: YamlSource | None = None) -> None:
    """SuiteLimitError when a resolved entry holds more records (its pool: n, or the size of
    the task's enumeration for ``pool: all``; or its sampled sizes) than the record limit
    allows, or all entries together more than the limit on the total (default:
    RecordLimit.from_environment(); see gengap.limits); SuiteError when a task refuses to
    enumerate an entry's ``pool: all``. Nothing is built."""
    try:
        limit = limit or RecordLimit.from_environment()
    except LimitError as err:
        raise SuiteLimitError(str(err)) from None
    raw = (source.data.get("entries") if source is not None and isinstance(source.data, dict) else None) or []

    def error(resolved: dict[str, Any], key: list[str], message: str, kind: type[SuiteError]) -> SuiteError:
        index = _raw_index(raw, resolved)
        if source is None or index is None:
            return kind(f"config {resolved['name']}: {message}")
        return kind(str(source.error(["entries", index, *key], message)))

    total = 0
    for resolved in suite["entries"]:
        try:
            counted = _counted_records(resolved)
        except ParamError as err:
            raise error(resolved, ["pool"], str(err), SuiteError) from None
        for task, params, n, key in counted:
            try:
                check_records(task, params, n, limit)
            except LimitError as err:
                raise error(resolved, key, str(err), SuiteLimitError) from None
            total += n
        together = sum(n for _, _, n, _ in counted)
        if len(counted) > 1 and together > limit.max_records:
            message = (f"its {len(counted)} tasks hold {together:,} records together; the limit is {limit.max_records:,} records per config "
                       f"(raise the limit with --max-records N or GENGAP_MAX_RECORDS=N)")
            raise error(resolved, counted[0][3], message, SuiteLimitError)
    try:
        check_total(total, len(suite["entries"]), limit)
    except LimitError as err:
        raise SuiteLimitError(str(source.error(["entries"], str(err))) if source is not None else str(err)) from None


def _counted_records(resolved: dict[str, Any]) -> list[tuple[str, Params, int, list[str]]]:
    """(task, parameters, records built, suite key) for each task of a resolved entry (one for
    a one-task entry; one per task of a multi-task entry: gengap.multitask)."""
    if is_multitask(resolved):
        key = ["pool"] if resolved["pool"] == "all" else ["pool", "n"]
        return [(task, params, n, key) for task, params, n in component_records(resolved)]
    n, _, key, params = _entry_records(resolved)
    return [(resolved["task"], params, n, key)]


def suite_data_bytes(suite: dict[str, Any]) -> int:
    """Estimated bytes of the data files of a resolved suite (within the limits: check_suite_limits
    first), from a small sample of each entry's records (gengap.limits.record_bytes)."""
    total = 0
    for resolved in suite["entries"]:
        if is_multitask(resolved):
            counted = component_records(resolved)
            built = sum(n for _, _, n in counted)
            share = written_records(resolved) / built if built else 0.0
            total += int(sum(n * share * record_bytes(task, params) for task, params, n in counted))
            continue
        _, written, _, params = _entry_records(resolved)
        total += written * record_bytes(resolved["task"], params)
    return total


def _raw_index(raw: list[Any], resolved: dict[str, Any]) -> int | None:
    """Index of the suite entry a resolved entry comes from (for line numbers in errors)."""
    for index, entry in enumerate(raw):
        if is_multitask(resolved):
            if is_multitask(entry) and resolved["split"] == str(entry.get("split")):
                return index
            continue
        if isinstance(entry, dict) and entry.get("task") == resolved["task"]:
            split = str(entry.get("split"))
            suffixes = [sweep[0] for sweep in SWEPT_OPTIONS.values()] + [LEXICON_SUFFIX]
            if resolved["split"] == split or any(resolved["split"].startswith(split + suffix) for suffix in suffixes):
                return index
    return None
