"""A mistyped command line is one sentence too, like every other user error.

Click answers a usage error (an unknown option, a value out of range, a missing
argument) with a usage line, a hint and the error: four lines, where kubeshift's other
refusals are one ``error:`` sentence. ``OneSentenceGroup`` is the command group that
says it in one, naming the ``--help`` to read; everything else is click's own.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import typer

# typer (0.29 on) carries its own copy of click and raises that copy's exceptions.
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
from typer.core import TyperGroup


class OneSentenceGroup(TyperGroup):
    """kubeshift's top-level group: click's ``main``, its usage errors in one sentence."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            returned = super().main(args, prog_name, complete_var, False, **extra)
        except NoArgsIsHelpError as exc:  # `kubeshift` alone: the help, as before
            exc.show()
            sys.exit(exc.exit_code)
        except UsageError as exc:
            _refuse(exc)
        except ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except typer.Abort:
            typer.echo("Aborted!", err=True)
            sys.exit(1)
        except OSError as exc:
            if exc.errno == errno.EPIPE:  # the reader went away (`kubeshift plan | head`)
                sys.exit(1)
            raise
        # Not standalone, click returns an Exit's code instead of exiting with it.
        sys.exit(returned if isinstance(returned, int) else 0)


def _refuse(exc: UsageError) -> NoReturn:
    message = exc.format_message().rstrip(".")
    command = exc.ctx.command_path if exc.ctx is not None else "kubeshift"
    typer.echo(f"error: {message} (see `{command} --help`).", err=True)
    sys.exit(exc.exit_code)
