"""Procedural task generators: the record type, the task interface and the task registry.

This is the base layer of gengap: it imports no other package of the project.
"""

from generators import aliases as _aliases
from generators.batch import Batch, Record, concat, record_id
from generators.jsonl import batch_to_jsonl, dumps_record
from generators.params import ParamError, Params, knob
from generators.registry import UnknownTaskError, get_task, register, task_names
from generators.blocks import BLOCK_SIZE, BlockPlan
from generators.curriculum import Curriculum, CurriculumError, parse_curriculum
from generators.exclusion import Exclusion
from generators.streams import RecordStream, Shard, size_levels
from generators.mixtures import Component, MixtureError, MixtureStream, TaskMixture, load_mixture
from generators.seeding import block_rng
from generators.task import FAMILIES, Task

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
