"""The data source's option tables (kafkafmt.spark.options, which the documentation renders) are the options the
parsers read, with the defaults they apply: a new option in the code without its row, or a row the parser
ignores, fails here.  No Spark needed."""
from __future__ import annotations

import ast
import inspect
import textwrap

import pytest

from kafkafmt.config import LogConfig
from kafkafmt.spark.options import READ_OPTIONS, WRITE_OPTIONS
from kafkafmt.spark.plan import ReadOptions
from kafkafmt.spark.write import WriteOptions

#: the input or output location: Spark's load(path) / save(path), no option of the table
LOCATION = {"path", "paths"}


def keys_read(method) -> set[str]:
    """The lower-case option names ``method`` reads from its option map ``o``: ``o.get(KEY, ...)``, ``o[KEY]``,
    ``KEY in o`` and the parser's helpers called as ``helper(o, KEY, ...)``."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(method)))
    found = set()
    for n in ast.walk(tree):
        key = None
        if isinstance(n, ast.Call) and n.args:
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr == "get" and isinstance(f.value, ast.Name) and f.value.id == "o":
                key = n.args[0]
            elif isinstance(n.args[0], ast.Name) and n.args[0].id == "o" and len(n.args) > 1:
                key = n.args[1]
        elif isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == "o":
            key = n.slice
        elif isinstance(n, ast.Compare) and any(isinstance(c, ast.Name) and c.id == "o" for c in n.comparators):
            key = n.left
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            found.add(key.value)
    return found


@pytest.mark.parametrize("parser,table", [(ReadOptions.parse, READ_OPTIONS), (WriteOptions.parse, WRITE_OPTIONS)],
                         ids=["read", "write"])
def test_the_table_lists_exactly_the_options_the_parser_reads(parser, table):
    names = [o.name.lower() for o in table]
    assert len(set(names)) == len(names)
    assert keys_read(parser) - LOCATION == set(names)


def test_the_documented_defaults_are_the_parsers(tmp_path):
    read = ReadOptions.parse({"path": str(tmp_path)})
    documented = {o.name: o.default for o in READ_OPTIONS}
    assert (read.starting_offsets, read.ending_offsets) == (documented["startingOffsets"], documented["endingOffsets"])
    assert (read.level, read.mode) == (documented["level"], documented["mode"])
    assert read.include_data == (documented["includeData"] == "true")
    assert read.max_bytes_per_partition == int(documented["maxBytesPerPartition"]) == 128 * 1024 * 1024
    assert read.starting_timestamp is read.ending_timestamp is read.min_partitions is None
    write = WriteOptions.parse({"path": str(tmp_path)})
    documented = {o.name: o.default for o in WRITE_OPTIONS}
    assert (write.magic, write.codec) == (int(documented["magic"]), documented["codec"])
    assert write.batch_size == int(documented["batchSize"]) == 16384
    assert write.segment_bytes == int(documented["segmentBytes"]) == LogConfig().segment_bytes
    assert write.topic is write.default_timestamp is None


def test_the_key_check_sees_every_way_of_reading_an_option():
    def parse(options):
        o = {k.lower(): v for k, v in options.items()}
        if "path" not in o:
            raise ValueError
        return o.get("mode", "x"), o["topic"], _int(o, "minpartitions", None), options.get("ignored")

    def _int(o, key, default):
        return default
    assert keys_read(parse) == {"path", "mode", "topic", "minpartitions"}
