"""Generate flinktune's versioned option catalog from real Flink releases.

Route: the PyPI sdists of ``apache-flink-libraries`` carry Flink's binary distribution
(``deps/lib/flink-dist*.jar``, the table jars, ``deps/opt`` and ``deps/plugins``). For the
newest patch release of every supported minor version this script

1. downloads the sdist with ``pip download --no-deps`` (no build, the archive is unpacked by hand),
2. unpacks the jars, plus the ``flink-table-planner.jar`` nested inside the planner loader,
3. runs ``OptionExtractor.java`` (Java 17) which reflects over every static ``ConfigOption``
   field and writes one JSON line per field,
4. merges the per-release extractions into ``flinktune/data/flink_options.json``.

Usage (from the repository root)::

    python tools/catalog/generate.py --work /work/catalog-work
    python tools/catalog/generate.py --work DIR --skip-extract   # re-merge existing extractions

Work files (downloads, unpacked jars, raw JSONL) stay in ``--work``; only the merged catalog is
written into the package.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from flinktune.units import format_duration, format_memory  # noqa: E402
from flinktune.versions import PATCH_RELEASES  # noqa: E402

# The release read for each line: its newest patch on PyPI (`pip index versions apache-flink-libraries`),
# from flinktune's one table of releases.
RELEASES: dict[str, str] = dict(PATCH_RELEASES)
PACKAGE = "apache-flink-libraries"
OUT = REPO / "flinktune" / "data" / "flink_options.json"
EXTRACTOR = Path(__file__).resolve().parent / "OptionExtractor.java"

_SCALARS = {
    "java.lang.String": "String",
    "java.lang.Boolean": "Boolean",
    "java.lang.Integer": "Integer",
    "java.lang.Long": "Long",
    "java.lang.Float": "Float",
    "java.lang.Double": "Double",
    "org.apache.flink.configuration.MemorySize": "MemorySize",
    "java.time.Duration": "Duration",
    "java.util.Map": "Map",
}

# Options that belong in a table's WITH (...) clause, a format, a SQL hint or a catalog/module
# definition, not in Flink's configuration file. They are left out of the catalog, so a stray
# `connector: kafka` in flink-conf.yaml is reported as unknown.
_DDL_PACKAGES = re.compile(
    r"\.formats\.|^org\.apache\.flink\.connector\.[a-z.]*\.table$|\.table\.factories$|"
    r"\.table\.connector\.|\.table\.catalog$|\.table\.module$|\.planner\.hint$|\.table\.filesystem$|"
    r"^org\.apache\.flink\.table\.descriptors$"
)
# Reporter plugins declare their options relative to `metrics.reporter.<name>.`.
_REPORTER_PACKAGE = re.compile(r"^org\.apache\.flink\.metrics\.")
_SUFFIX = re.compile(r"Documentation\$SuffixOption\(\s*(?:value=)?\"([^\"]*)\"")
_OVERRIDE_DEFAULT = re.compile(r"Documentation\$OverrideDefault\(\s*(?:value=)?\"((?:[^\"\\]|\\.)*)\"")
_EXCLUDED = "Documentation$ExcludeFromDocumentation"


def run(cmd: list[str], **kwargs: Any) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)


def sdist_path(work: Path, release: str) -> Path | None:
    """The downloaded archive: an sdist up to 2.1, a universal wheel from 2.2 on."""
    for name in (f"apache-flink-libraries-{release}.tar.gz", f"apache_flink_libraries-{release}.tar.gz",
                 f"apache_flink_libraries-{release}-py2.py3-none-any.whl"):
        if (work / "dl" / name).exists():
            return work / "dl" / name
    return None


def _wanted(path: str) -> str | None:
    """File name of a jar under deps/{lib,opt,plugins} (sdist) or pyflink/{lib,opt,plugins} (wheel)."""
    parts = path.split("/")
    for root in ("deps", "pyflink"):
        if root in parts and parts.index(root) + 1 < len(parts):
            area = parts[parts.index(root) + 1]
            jar = path.endswith(".jar") and not parts[-1].startswith("log4j")
            if area in ("lib", "opt", "plugins") and jar:
                return parts[-1]
    return None


def download(work: Path, release: str) -> Path:
    found = sdist_path(work, release)
    if found is None:
        (work / "dl").mkdir(parents=True, exist_ok=True)
        run([sys.executable, "-m", "pip", "download", "--no-deps", f"{PACKAGE}=={release}",
             "-d", str(work / "dl")])
        found = sdist_path(work, release)
    if found is None:
        raise SystemExit(f"no sdist for {PACKAGE}=={release} in {work / 'dl'}")
    return found


def unpack_jars(work: Path, release: str, sdist: Path) -> list[Path]:
    """Jars to reflect over, flink-dist first (it wins for classes present twice)."""
    target = work / "jars" / release
    if not target.exists():
        target.mkdir(parents=True)
        if sdist.suffix == ".whl":
            with zipfile.ZipFile(sdist) as wheel:
                for info in wheel.infolist():
                    name = _wanted(info.filename)
                    if name is not None:
                        (target / name).write_bytes(wheel.read(info))
        else:
            with tarfile.open(sdist) as archive:
                for member in archive.getmembers():
                    name = _wanted(member.name)
                    if member.isfile() and name is not None:
                        member.name = name
                        archive.extract(member, target, filter="data")
        for loader in target.glob("flink-table-planner-loader*.jar"):
            with zipfile.ZipFile(loader) as jar:
                if "flink-table-planner.jar" in jar.namelist():
                    jar.extract("flink-table-planner.jar", target)
    jars = sorted(target.glob("*.jar"))
    return sorted(jars, key=lambda p: (not p.name.startswith("flink-dist"), p.name))


def extract(work: Path, release: str) -> Path:
    classes = work / "classes"
    if not (classes / "OptionExtractor.class").exists():
        classes.mkdir(parents=True, exist_ok=True)
        run(["javac", "-d", str(classes), str(EXTRACTOR)])
    jars = unpack_jars(work, release, download(work, release))
    raw = work / "raw" / f"{release}.jsonl"
    raw.parent.mkdir(parents=True, exist_ok=True)
    run(["java", "-Xmx1g", "-cp", str(classes), "OptionExtractor", str(raw), *map(str, jars)],
        stdout=subprocess.DEVNULL)
    return raw


# ----------------------------------------------------------------------------- normalising


def render(value: Any) -> str | None:
    """A default value in the text form a config file would carry."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ";".join(render(item) or "" for item in value)
    if isinstance(value, dict):
        if "bytes" in value:
            return format_memory(int(value["bytes"]))
        if "duration_s" in value:
            return format_duration(int(value["duration_s"]) * 10**9 + int(value["nano"]))
        if "float" in value:
            return str(value["float"])
        if "map" in value:
            return ",".join(f"{k}:{v}" for k, v in value["map"].items())
    raise ValueError(f"cannot render default {value!r}")


def type_name(row: dict[str, Any]) -> tuple[str, str | None]:
    clazz = row.get("clazz")
    if clazz is None:
        base = "String"
    elif row.get("enum") is not None:
        base = "Enum"
    else:
        base = _SCALARS.get(clazz, clazz.rsplit(".", 1)[-1])
    if row.get("list"):
        return "List", base
    return base, None


def full_key(row: dict[str, Any]) -> str | None:
    """The key as it appears in a config file, or None for table DDL options."""
    key: str = row["key"]
    package = row["class"].rsplit(".", 1)[0]
    for annotation in row["annotations"]:
        match = _SUFFIX.search(annotation)
        if match:
            return f"{match.group(1)}.{key}"
    # Before @SuffixOption existed (<= 1.15) these were declared relative without saying so.
    relative_to_reporter = _REPORTER_PACKAGE.match(package) or row["class"] in (
        "org.apache.flink.configuration.MetricOptions", "org.apache.flink.runtime.metrics.ReporterSetup")
    if relative_to_reporter and not key.startswith("metrics."):
        return f"metrics.reporter.<name>.{key}"
    if package == "org.apache.flink.externalresource.gpu":
        return f"external-resource.<resource_name>.param.{key}"
    if _DDL_PACKAGES.search(package) and not key.startswith("table."):
        return None
    if "." not in key and not package.startswith("org.apache.flink.configuration"):
        return None
    return key


def describe(row: dict[str, Any]) -> dict[str, Any]:
    option_type, element = type_name(row)
    state: dict[str, Any] = {"type": option_type, "default": render(row["default"])}
    if element is not None:
        state["element_type"] = element
    if row.get("enum") is not None:
        state["enum"] = row["enum"]
    # False / empty attributes are left out to keep the file small (it is parsed at every lint).
    if row["fallback"]:
        state["fallback"] = [[key, bool(dep)] for key, dep in row["fallback"]]
    if row["deprecated"] or row["class_deprecated"]:
        state["deprecated"] = True
    if any(_EXCLUDED in a for a in row["annotations"]):
        state["hidden"] = True
    for annotation in row["annotations"]:
        match = _OVERRIDE_DEFAULT.search(annotation)
        if match:
            state["doc_default"] = match.group(1).encode().decode("unicode_escape")
    state["class"] = row["class"].removeprefix("org.apache.flink.")
    return state


def rank(row: dict[str, Any]) -> tuple[int, int, int]:
    """Which of several fields declaring the same key describes it best (lowest wins)."""
    deprecated = bool(row["deprecated"] or row["class_deprecated"])
    return (int(deprecated), int(not row["jar"].startswith("flink-dist")), int(not row["public"]))


def read_release(raw: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    by_key: dict[str, list[dict[str, Any]]] = {}
    errors: list[str] = []
    for line in raw.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "error" in row:
            errors.append(row["error"])
            continue
        key = full_key(row)
        if key is not None:
            by_key.setdefault(key, []).append(row)
    options: dict[str, dict[str, Any]] = {}
    for key, rows in by_key.items():
        rows.sort(key=rank)
        state = describe(rows[0])
        # The key is deprecated only if every field declaring it is (AkkaOptions vs RpcOptions).
        if not all(describe(r).get("deprecated") for r in rows):
            state.pop("deprecated", None)
        fallback = state.get("fallback", [])
        seen = {k for k, _ in fallback}
        for other in rows[1:]:
            for fb_key, dep in other["fallback"]:
                if fb_key not in seen:
                    fallback.append([fb_key, bool(dep)])
                    seen.add(fb_key)
        if fallback:
            state["fallback"] = fallback
        options[key] = state
    return options, errors


# ----------------------------------------------------------------------------- merging


def ranges(versions: list[str], present: Iterable[str]) -> list[list[str]]:
    """Consecutive runs of supported versions, as [first, last] pairs."""
    wanted = set(present)
    runs: list[list[str]] = []
    previous_in = False
    for version in versions:
        if version in wanted:
            if previous_in:
                runs[-1][1] = version
            else:
                runs.append([version, version])
        previous_in = version in wanted
    return runs


def merge(versions: list[str], per_version: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    aliases: dict[str, list[list[Any]]] = {}
    all_keys = sorted({key for release in per_version.values() for key in release})
    for key in all_keys:
        present = [v for v in versions if key in per_version[v]]
        states: list[list[Any]] = []
        current: dict[str, Any] = {}
        for version in present:
            state = per_version[version][key]
            if not states:
                states.append([version, dict(state)])
            else:
                diff = {name: value for name, value in state.items() if current.get(name) != value}
                diff.update({name: None for name in current if name not in state})
                if diff:
                    states.append([version, diff])
            current = dict(state)
        options[key] = {"present": ranges(versions, present), "states": states}

    # alias key -> per version (target, deprecated); a key that is an alias of two options
    # in one version (it happens in the table API) points at the first in key order.
    alias_by_version: dict[str, dict[str, tuple[str, bool]]] = {}
    for version in versions:
        for key in sorted(per_version[version]):
            for fb_key, dep in per_version[version][key].get("fallback", []):
                alias_by_version.setdefault(fb_key, {}).setdefault(version, (key, dep))
    for alias, by_version in sorted(alias_by_version.items()):
        runs: list[list[Any]] = []
        for version in versions:
            if version not in by_version:
                continue
            target, dep = by_version[version]
            previous = versions[versions.index(version) - 1] if versions.index(version) else None
            if runs and runs[-1][1] == previous and runs[-1][2] == target and runs[-1][3] == dep:
                runs[-1][1] = version
            else:
                runs.append([version, version, target, dep])
        aliases[alias] = runs

    for key, entry in options.items():
        entry.update(lifecycle(versions, key, per_version, alias_by_version.get(key, {})))
    return {"options": options, "aliases": aliases}


def lifecycle(versions: list[str], key: str, per_version: dict[str, dict[str, dict[str, Any]]],
              alias_versions: dict[str, tuple[str, bool]]) -> dict[str, str | None]:
    """since / deprecated_since / removed_in of a canonical option key."""
    present = [v for v in versions if key in per_version[v]]
    known = [v for v in versions if key in per_version[v] or v in alias_versions]
    deprecated_since = None
    for version in reversed(known):
        option = per_version[version].get(key)
        # An option that is also a *deprecated* key of another option is deprecated; one that is only
        # a plain fallback key (jobmanager.rpc.address for RestOptions.ADDRESS "rest.address",
        # withFallbackKeys) is an option in its own right. A key that is no option any more is.
        alias = alias_versions.get(version)
        deprecated_here = (option is None or bool(option.get("deprecated"))
                           or (alias is not None and bool(alias[1])))
        if not deprecated_here:
            break
        deprecated_since = version
    removed_in = None
    last = versions.index(known[-1])
    if last + 1 < len(versions):
        removed_in = versions[last + 1]
    return {"since": present[0], "deprecated_since": deprecated_since, "removed_in": removed_in}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="scratch directory (not in the repo)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--skip-extract", action="store_true", help="reuse WORK/raw/*.jsonl")
    args = parser.parse_args()

    versions = list(RELEASES)
    per_version: dict[str, dict[str, dict[str, Any]]] = {}
    problems: dict[str, list[str]] = {}
    for version, release in RELEASES.items():
        raw = args.work / "raw" / f"{release}.jsonl"
        if not args.skip_extract or not raw.exists():
            raw = extract(args.work, release)
        per_version[version], problems[version] = read_release(raw)
        print(f"{release}: {len(per_version[version])} keys, {len(problems[version])} classes not loadable")

    merged = merge(versions, per_version)
    catalog = {
        "schema": 1,
        "generator": "tools/catalog/generate.py + tools/catalog/OptionExtractor.java",
        "source": f"PyPI {PACKAGE} sdists: deps/lib, deps/opt, deps/plugins jars and the nested "
                  "flink-table-planner.jar; every static ConfigOption field, read by reflection",
        "versions": versions,
        "releases": RELEASES,
        "option_counts": {v: len(per_version[v]) for v in versions},
        "unloadable_classes": {v: sorted({p.split(":")[0] for p in problems[v]}) for v in versions},
        **merged,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # One option per line keeps diffs between regenerations readable.
    lines = ["{"]
    items = list(catalog.items())
    for index, (name, value) in enumerate(items):
        end = "," if index + 1 < len(items) else ""
        if name in ("options", "aliases"):
            lines.append(f"{json.dumps(name)}: {{")
            entries = list(value.items())
            for j, (key, entry) in enumerate(entries):
                comma = "," if j + 1 < len(entries) else ""
                lines.append(f"{json.dumps(key)}: {json.dumps(entry, separators=(',', ':'))}{comma}")
            lines.append("}" + end)
        else:
            lines.append(f"{json.dumps(name)}: {json.dumps(value, separators=(',', ':'))}{end}")
    lines.append("}")
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes, {len(merged['options'])} options, "
          f"{len(merged['aliases'])} alias keys)")


if __name__ == "__main__":
    main()
