"""Procedural task generators: the record type, the task interface and the task registry.

This is the base layer of gengap: it imports no other package of the project.
"""

from gengap.legacy_names import redirect as _redirect

_redirect(__name__)  # imported as the deprecated top-level name: that name becomes gengap.generators


from gengap.generators import aliases as _aliases
from gengap.generators.batch import Batch, Record, concat, record_id
from gengap.generators.jsonl import batch_to_jsonl, dumps_record
from gengap.generators.params import ParamError, Params, knob
from gengap.generators.registry import UnknownTaskError, get_task, register, task_names
from gengap.generators.blocks import BLOCK_SIZE, BlockPlan
from gengap.generators.curriculum import Curriculum, CurriculumError, parse_curriculum
from gengap.generators.exclusion import Exclusion
from gengap.generators.streams import RecordStream, Shard, size_levels
from gengap.generators.mixtures import Component, MixtureError, MixtureStream, TaskMixture, load_mixture
from gengap.generators.seeding import block_rng
from gengap.generators.task import FAMILIES, Task

_aliases.install()

__all__ = [
    "BLOCK_SIZE",
    "Batch",
    "BlockPlan",
    "Component",
    "Curriculum",
    "CurriculumError",
    "Exclusion",
    "FAMILIES",
    "MixtureError",
    "MixtureStream",
    "ParamError",
    "Params",
    "Record",
    "RecordStream",
    "Shard",
    "Task",
    "TaskMixture",
    "UnknownTaskError",
    "batch_to_jsonl",
    "block_rng",
    "concat",
    "dumps_record",
    "get_task",
    "parse_curriculum",
    "knob",
    "load_mixture",
    "record_id",
    "register",
    "size_levels",
    "task_names",
]
