"""What every command shares: the two consoles, one-sentence errors, options, tables."""

from __future__ import annotations

import functools
import json
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from automation.cli.usage_errors import ClickException
from automation.config.project import DEFAULT_STACK, check_stack_name, project_dir
from automation.core.errors import KubeshiftError

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


@dataclass
class Globals:
    stack: str = DEFAULT_STACK
    json: bool = False
    verbose: bool = False


F = TypeVar("F", bound=Callable[..., Any])


def handles_errors(func: F) -> F:
    """Turn kubeshift errors into one line on stderr and their exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except KubeshiftError as exc:
            err.print(Text.assemble(("error: ", "bold red"), str(exc)), highlight=False)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            err.print("interrupted; run the same command again to resume.")
            raise typer.Exit(130) from None
        except (typer.Exit, typer.Abort, ClickException):
            raise
        except BrokenPipeError:  # the reader went (`| head`): stop quietly, as SIGPIPE would
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(128 + signal.SIGPIPE) from None
        except Exception as exc:  # a bug: still one sentence, the traceback on --verbose
            logging.getLogger("kubeshift").debug("unexpected error", exc_info=True)
            err.print(
                Text.assemble(
                    ("error: ", "bold red"),
                    f"kubeshift failed unexpectedly ({type(exc).__name__}: {exc}); "
                    "run again with --verbose for the traceback and report it.",
                ),
                highlight=False,
            )
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


def globals_of(ctx: typer.Context) -> Globals:
    return ctx.ensure_object(Globals)


def emit_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, default=str) + "\n")


StackOpt = Annotated[
    str | None,
    typer.Option(
        "--stack", "-s", metavar="NAME", help="Stack name (overrides the global --stack)."
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
MarkdownOpt = Annotated[
    bool, typer.Option("--markdown", help="Markdown for a pull-request comment.")
]


ID_COLUMNS = frozenset({"phase", "step", "id", "type", "name", "live id"})
"""Columns kept whole, never wrapped or cut: what a reader copies into another command."""


def make_table(
    title: str, columns: tuple[str, ...], rows: Sequence[Sequence[str]], *, lines: bool = False
) -> Table:
    """A table whose id columns (phase, step) are never cut, at any width or when piped:
    a user types those ids back (``--from``, ``--to``); other columns wrap instead."""
    table = Table(title=title, show_lines=lines)
    for index, name in enumerate(columns):
        if name in ID_COLUMNS:
            width = max([len(name), *(len(row[index]) for row in rows)])
            table.add_column(name, no_wrap=True, min_width=width)
        else:
            table.add_column(name, overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def chosen_stack(ctx: typer.Context, stack: str | None) -> str:
    return check_stack_name(stack or globals_of(ctx).stack)


def project_for(stack: str) -> Path:
    """The project to run ``stack`` against (``$KUBESHIFT_PROJECT_DIR`` aims it)."""
    check_stack_name(stack)
    return project_dir()
