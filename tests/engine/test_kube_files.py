"""read_objects: formats it accepts and hostile input it refuses with a named limit."""

import contextlib
import json

import pytest
from hypothesis import given, settings, strategies as st

from topology.ingest.files import read_objects
from topology.model.hardware import ModelError

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_it_expands_a_kind_list(tmp_path):
    path = write(tmp_path, "l.json", json.dumps({"kind": "List", "items": [NODE, NODE]}))
    assert [o for _, o in read_objects(path)] == [NODE, NODE]


def test_it_reads_several_yaml_documents(tmp_path):
    path = write(tmp_path, "a.yaml", "kind: Node\n---\n---\nkind: Pod\n")
    assert [o["kind"] for _, o in read_objects(path)] == ["Node", "Pod"]


def test_it_reads_a_directory_in_sorted_order_labelling_each_source(tmp_path):
    write(tmp_path, "b.yaml", "kind: B\n")
    write(tmp_path, "a.json", '{"kind": "A"}')
    write(tmp_path, "notes.txt", "ignored")
    objects = read_objects(tmp_path)
    assert [(source.rsplit("/", 1)[1], o["kind"]) for source, o in objects] == [
        ("a.json", "A"), ("b.yaml", "B"),
    ]  # fmt: skip


def test_it_records_a_refused_file_and_reads_the_others_when_asked(tmp_path):
    write(tmp_path, "a.yaml", "kind: Node\nmetadata: {name: n1}\n")
    write(tmp_path, "b.yaml", "kind: [unclosed\n")
    write(tmp_path, "c.yaml", "kind: Pod\n")
    skipped = []
    objects = read_objects(tmp_path, skipped=skipped)
    assert [o["kind"] for _, o in objects] == ["Node", "Pod"]
    assert [(e.source.rsplit("/", 1)[1], e.reason.split(":")[0]) for e in skipped] == [
        ("b.yaml", "not valid YAML")
    ]
    with pytest.raises(ModelError, match="not valid YAML"):
        read_objects(tmp_path)  # without ``skipped`` the first refusal still raises


def test_it_refuses_input_over_max_bytes(tmp_path):
    path = write(tmp_path, "big.yaml", "kind: Node\n" * 100)
    with pytest.raises(ModelError, match="max_bytes=100"):
        read_objects(path, max_bytes=100)


def test_it_refuses_more_than_max_objects(tmp_path):
    path = write(tmp_path, "l.json", json.dumps({"kind": "List", "items": [NODE] * 5}))
    with pytest.raises(ModelError, match="max_objects=3"):
        read_objects(path, max_objects=3)


def test_it_refuses_a_yaml_alias_bomb(tmp_path):
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in "bcdefghi":
        previous = chr(ord(level) - 1)
        lines.append(f"{level}: &{level} [{','.join(['*' + previous] * 9)}]")
    path = write(tmp_path, "bomb.yaml", "\n".join(lines) + "\n")
    with pytest.raises(ModelError, match="alias bomb"):
        read_objects(path)


def test_it_refuses_nesting_deeper_than_64(tmp_path):
    path = write(tmp_path, "deep.json", "[" * 65 + "]" * 65)
    with pytest.raises(ModelError, match="deeper than 64"):
        read_objects(path)


def test_it_refuses_very_deep_nesting_without_crashing(tmp_path):
    path = write(tmp_path, "deeper.yaml", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(ModelError, match="deeper than 64"):
        read_objects(path)


def test_it_names_the_line_of_a_yaml_syntax_error(tmp_path):
    path = write(tmp_path, "bad.yaml", "kind: Node\nmetadata: {name: [\n")
    with pytest.raises(ModelError, match=r"bad.yaml: not valid YAML: .* at line \d"):
        read_objects(path)


def test_it_refuses_a_document_that_is_not_an_object(tmp_path):
    path = write(tmp_path, "s.yaml", "- 1\n- 2\n")
    with pytest.raises(ModelError, match="document is a list, not an object"):
        read_objects(path)


def test_it_refuses_an_unreadable_path(tmp_path):
    with pytest.raises(ModelError, match="unreadable"):
        read_objects(tmp_path / "missing.yaml")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_it_raises_only_model_error_on_arbitrary_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "x.yaml"
    path.write_bytes(data)
    with contextlib.suppress(ModelError):
        read_objects(path, max_bytes=10_000)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="{}[]:,&*!-|>'\"\n abk1.#%@`?", max_size=200))
def test_it_raises_only_model_error_on_yaml_like_text(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "x.yaml"
    path.write_text(text)
    with contextlib.suppress(ModelError):
        read_objects(path, max_bytes=10_000)
