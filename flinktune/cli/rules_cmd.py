"""``flinktune rules list | explain CODE | check [DIR...]``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from flinktune.cli.common import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK, checked_format, emit, fail, guarded
from flinktune.cli.flags import Format, NoColor, Output, Quiet, Verbose

RulesOption = Annotated[list[Path] | None,
                        typer.Option("--rules", metavar="DIR", help="Extra rule folder (repeatable).")]


def register(app: typer.Typer) -> None:
    rules_app = typer.Typer(name="rules", help="List, explain and check lint rules.", no_args_is_help=True)

    @rules_app.command("list")
    def list_rules(
        format: Annotated[str, Format("rules")] = "text",
        rules: RulesOption = None,
        output: Annotated[Path | None, Output()] = None,
        verbose: Annotated[bool, Verbose(
            "in text, why each rule exists and the file it comes from (json and markdown always have "
            "both).")] = False,
        quiet: Annotated[bool, Quiet()] = False,
        no_color: Annotated[bool, NoColor()] = False,
    ) -> None:
        """List every rule (bundled plus --rules folders)."""
        from flinktune.rules import load_rules

        # Nothing but errors goes to stderr here: --quiet holds as it is.
        del quiet

        def run() -> None:
            fmt = checked_format("rules", format)
            ruleset = load_rules(extra_dirs=tuple(rules or ()))
            emit("rules", ruleset, fmt, output=output, no_color=no_color, verbose=verbose, inputs=rules or ())

        guarded(run)

    @rules_app.command("explain")
    def explain(
        code: Annotated[str, typer.Argument(
            metavar="CODE|NAME", help="Rule code or name, e.g. FTC030 or network-memory-too-small.")],
        rules: RulesOption = None,
    ) -> None:
        """Show one rule: why it exists, its condition, fix, references and examples."""
        from flinktune.rules import load_rules
        from flinktune.rules.describe import render_explain

        ruleset = guarded(lambda: load_rules(extra_dirs=tuple(rules or ())))
        wanted = code.strip().lower()
        rule = ruleset.get(code) or next((r for r in ruleset.rules if r.name.lower() == wanted), None)
        if rule is None:
            fail(f"no rule with code or name '{code}' (see 'flinktune rules list')")
        typer.echo(render_explain(rule), nl=False)

    @rules_app.command("check")
    def check(
        dirs: Annotated[list[Path] | None, typer.Argument(
            metavar="[DIR]...", help="Rule folders or files to check (default: the bundled rules).")] = None,
        rules: RulesOption = None,
    ) -> None:
        """Validate rule files and run their pass/fail examples (exit 1 if any fails)."""
        raise typer.Exit(_check([*(dirs or ()), *(rules or ())]))

    app.add_typer(rules_app, name="rules")


def _check(paths: list[Path]) -> int:
    from flinktune.errors import RuleError
    from flinktune.rules.examples import run_examples
    from flinktune.rules.loader import build_ruleset, bundled_rule_texts, rule_texts_in

    user_texts = [text for path in paths for text in rule_texts_in(path)]
    unreadable = [text for text in user_texts if text.problem is not None]
    if unreadable:
        for text in unreadable:
            typer.echo(f"flinktune: error: {text.source}: {text.problem}", err=True)
        return EXIT_BAD_INPUT
    if paths and not user_texts:
        where = ", ".join(str(p) for p in paths)
        typer.echo(f"flinktune: error: no rule files (*.yaml) in {where}", err=True)
        return EXIT_BAD_INPUT
    # Bundled rules take part so that a user rule reusing a bundled code is reported.
    try:
        ruleset = build_ruleset([*bundled_rule_texts(), *user_texts])
    except RuleError as error:
        for problem in error.problems or (error.one_line(),):
            typer.echo(problem)
        count = len(error.problems) or 1
        typer.echo(f"{count} problem{'s' if count != 1 else ''} in rule files")
        return EXIT_FINDINGS
    checked_sources = {text.source for text in user_texts} if paths else None
    failures = 0
    examples = 0
    checked = 0
    for rule in ruleset:
        if checked_sources is not None and rule.source not in checked_sources:
            continue
        checked += 1
        for result in run_examples(rule, _metrics_items):
            examples += 1
            if not result.ok:
                failures += 1
                typer.echo(f"{rule.source}: {result.label()}: {result.detail}")
    counted = f"{checked} rule{'s' if checked != 1 else ''}, {examples} example{'s' if examples != 1 else ''}"
    if failures:
        typer.echo(f"{counted}: {failures} failed")
        return EXIT_FINDINGS
    typer.echo(f"{counted}: all passed")
    return EXIT_OK


def _metrics_items(metrics: Any, version: Any) -> Any:
    """Diagnose an analysis rule's metrics example (numpy, no Spark): imported only when one runs."""
    from flinktune.analysis.example_metrics import items_from_metrics

    return items_from_metrics(metrics, version)
