from __future__ import annotations

import os
from pathlib import Path

from flinktune.lint.paths import expand_paths, is_flink_config_candidate


def _w(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_folder_picks_only_flink_files(tmp_path: Path) -> None:
    _w(tmp_path / "conf" / "flink-conf.yaml", "a: 1\n")
    _w(tmp_path / "conf" / "config.yaml", "taskmanager:\n  numberOfTaskSlots: 2\n")
    _w(tmp_path / "other" / "config.yaml", "logging: debug\n")                  # not Flink
    _w(tmp_path / "k8s" / "deploy.yaml", "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\n")
    _w(tmp_path / "k8s" / "cm.yml", "kind: ConfigMap\ndata:\n  flink-conf.yaml: |\n    a: 1\n")
    _w(tmp_path / "k8s" / "svc.yaml", "kind: Service\n")
    _w(tmp_path / ".git" / "flink-conf.yaml", "a: 1\n")                          # hidden folder
    _w(tmp_path / "README.md", "flink-conf.yaml\n")
    found = expand_paths([str(tmp_path)]).files
    rel = sorted(Path(f).relative_to(tmp_path).as_posix() for f in found)
    assert rel == ["conf/config.yaml", "conf/flink-conf.yaml", "k8s/cm.yml", "k8s/deploy.yaml"]


def test_explicit_file_always_counts_and_missing_is_a_problem(tmp_path: Path) -> None:
    odd = _w(tmp_path / "settings.txt", "a: 1\n")
    out = expand_paths([str(odd), str(tmp_path / "missing.yaml"), str(odd)])
    assert out.files == (str(odd),)
    assert [p.one_line() for p in out.problems] == [f"{tmp_path / 'missing.yaml'}: no such file or folder"]


def test_globs(tmp_path: Path) -> None:
    a = _w(tmp_path / "x" / "a-flink-conf.yaml", "a: 1\n")
    b = _w(tmp_path / "y" / "z" / "b.yaml", "a: 1\n")
    out = expand_paths([str(tmp_path / "**" / "*.yaml"), str(tmp_path / "*.none")])
    assert sorted(out.files) == sorted([str(a), str(b)])
    assert [p.message for p in out.problems] == ["no file matches this pattern"]


def test_symlinks_followed_only_on_request(tmp_path: Path) -> None:
    real = _w(tmp_path / "real" / "flink-conf.yaml", "a: 1\n")
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(real, root / "flink-conf.yaml")
    os.symlink(real.parent, root / "linked")
    assert expand_paths([str(root)]).files == ()
    assert len(expand_paths([str(root)], follow_symlinks=True).files) == 2


def test_candidate_names(tmp_path: Path) -> None:
    assert is_flink_config_candidate(_w(tmp_path / "prod-flink-conf.yml", ""))
    assert not is_flink_config_candidate(_w(tmp_path / "flink-conf.json", ""))
