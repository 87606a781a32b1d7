"""libyaml composes what the pure-Python loader composes (issue 26: lint's YAML reading).

compose_documents takes libyaml's scanner and parser when it is there and the text is one on which
both agree; these tests hold it to the pure-Python loader node for node (tags, values, styles, flow,
start and end offsets, start lines and columns: what the readers and the writer use) on every YAML file
of the repository and the corpus, on edge cases, and on seeded mutations of those files.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from testkit import shared_dir

from flinktune.config import yaml_config
from flinktune.config.yaml_config import FlinkYamlLoader, compose_documents

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(yaml_config.CParser is None, reason="PyYAML was built without libyaml")


def _shape(node: object) -> tuple[object, ...]:
    start, end = node.start_mark, node.end_mark  # type: ignore[attr-defined]
    value = node.value  # type: ignore[attr-defined]
    if isinstance(value, list):
        children = tuple(tuple(_shape(part) for part in item) if isinstance(item, tuple) else _shape(item)
                         for item in value)
        return (type(node).__name__, node.tag, bool(node.flow_style),  # type: ignore[attr-defined]
                start.index, end.index, start.line, start.column, children)
    return (node.tag, value, node.style, start.index, end.index, start.line,  # type: ignore[attr-defined]
            start.column)


def _python(text: str) -> tuple[str, object]:
    loader = FlinkYamlLoader(text)
    try:
        docs = []
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                docs.append(_shape(node))
        return ("ok", docs)
    except Exception as error:  # any refusal is compared by its type
        return ("error", type(error).__name__)
    finally:
        loader.dispose()


def _libyaml(text: str) -> tuple[str, object] | None:
    try:
        docs = yaml_config._compose_fast(text)
    except Exception as error:
        return ("error", type(error).__name__)
    return None if docs is None else ("ok", [_shape(node) for node in docs])


def _files() -> dict[str, str]:
    paths: list[Path] = []
    for folder in (ROOT / "sample_configs", ROOT / "tests", ROOT / "rules", shared_dir() / "corpus"):
        if folder.is_dir():
            paths += [p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()]
    texts = {}
    for path in sorted(paths):
        try:
            texts[str(path)] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return texts


EDGE_CASES = {
    "nul": "a: b\x00c: d\n",
    "tab after colon": "a:\tb\n",
    "tab indent": "a:\n\tb: c\n",
    "flow colon": "a: {b:c}\n",
    "flow question mark": "a: [job?manager, 1]\n",
    "yaml 1.2": "%YAML 1.2\n---\na: 1\n",
    "yaml 1.3": "%YAML 1.3\n---\na: 1\n",
    "bell": "a: b\x07\n",
    "NEL": "a: b\x85c: d\n",
    "LS": "a: b\u2028c: d\n",
    "duplicate": "a: 1\na: 2\n",
    "alias": "a: &x [1]\nb: *x\n",
    "unknown alias": "a: *y\n",
    "colon in plain": "a: b:c\n",
    "complex key": "? a\n: b\n",
    "question key, no value": "a:\n  b: 1\n?    c: 2",
    "CRLF": "a: 1\r\nb: 2\r\n",
    "CR": "a: 1\rb: 2\r",
    "documents": "a: 1\n---\nb: 2\n...\n",
    "astral": "a: \U0001F600\n",
    "surrogate": "a: \ud800\n",
    "empty": "",
    "comment": "# x\n",
    "bad indent": "a:\n  b: 1\n c: 2\n",
    "quotes": "a: 'it''s'\nb: \"\\u263a\\x41\"\n",
    "folded": "a: >-\n  x\n  y\n",
    "tags": "a: !!str 1\nb: !custom x\n",
    "DEL": "a: b\x7f\n",
    "C1": "a: b\x9f\n",
    "empty flow value": "a: {b: 1, c: }\n",
    "empty flow item": "a: [1, , 2]\n",
    "block empty": "a:\nb: ~\nc: null\n",
    "deep": "a: " + "[" * 150 + "]" * 150 + "\n",
    "alias bomb": "a: &a [x]\n" + "".join(f"b{i}: *a\n" for i in range(60)),
    "merge key": "a: &x {b: 1}\nc:\n  <<: *x\n",
    "literal keep": "a: |+\n  x\n\n",
    "indentless": "a:\n- 1\n- b: 2\n",
    "no final newline": "a:\n  b: c",
    "byte-order mark inside": "a: \ufeffb\n",
    "NBSP": "a:\xa0b\n",
}


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_cases_compose_alike(name: str) -> None:
    text = EDGE_CASES[name]
    fast = _libyaml(text)
    if fast is not None:
        assert fast == _python(text)


def test_every_yaml_file_composes_alike_and_most_take_libyaml() -> None:
    texts = _files()
    assert texts, "no YAML files found"
    taken = 0
    for path, text in texts.items():
        fast = _libyaml(text)
        if fast is None:
            continue
        taken += 1
        assert fast == _python(text), path
    # The speed-up must not vanish unnoticed: ordinary files go through libyaml.
    assert taken >= 0.8 * len(texts), f"only {taken} of {len(texts)} files took libyaml"


def test_mutated_files_compose_alike() -> None:
    rng = random.Random(26)
    texts = [t for t in _files().values() if t]
    marks = ["\t", ":", '"', "'", "- ", "{", "[", "&", "*", "!", "%", "\n  ", "#", "|", ">", "?", "\u2028",
             "\x85", "\x7f", "\xa0", " ", ",", "@", "`", "~", "<<", "---", "...", "\\", "\r", "}", "]"]
    compared = 0
    for n in range(2500):
        text = rng.choice(texts)
        at = rng.randrange(len(text) + 1)
        if n % 3:
            mutated = text[:at] + rng.choice(marks) + text[at:]
        else:
            mutated = text[:at] + text[at + rng.randint(1, 4):]
        fast = _libyaml(mutated)
        if fast is None:
            continue
        compared += 1
        assert fast == _python(mutated), (n, mutated[max(0, at - 40):at + 40])
    assert compared > 500


def test_compose_documents_reports_pythons_error_for_what_libyaml_refuses() -> None:
    from flinktune.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        compose_documents("a: [1, 2\nb: 3\n", file="x.yaml")
    assert caught.value.line == 2 and "invalid YAML" in caught.value.message
