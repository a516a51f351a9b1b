"""Command groups behind their own door: named here, imported only when called.

``kubeshift sandbox …`` lives in :mod:`automation.sandbox.cli`. The command line names
it by module path and loads it when the group is called, so nothing on the production
path imports the sandbox (an import contract checks it) and ``kubeshift --help`` lists
the group without loading it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from typer._click.core import Command, Context
from typer.core import TyperCommand

from automation.cli.usage_errors import OneSentenceGroup
from automation.core.errors import KubeshiftError, UserError


@dataclass(frozen=True)
class Door:
    """A command group kept in another package: where it is and what it is for."""

    module: str
    """The module holding the group's ``app`` (a ``typer.Typer``)."""
    help: str
    extra: str
    """The package extra its dependencies come with (``pip install 'kubeshift[…]'``)."""
    aimed_check: str = ""
    """A function of that module called before any other command of a shell aimed at
    what the group runs (``check_aimed(root)``), with the value that aims it."""


SANDBOX_VARIABLE = "KUBESHIFT_SANDBOX"
"""Set by ``eval "$(kubeshift sandbox env)"``: the commands of that shell are aimed at
the sandbox, and each says so first."""

SANDBOX_HELP = "A local stand-in for one AWS account and its clusters, to rehearse a migration."

DOORS: dict[str, Door] = {
    "sandbox": Door(
        module="automation.sandbox.cli",
        help=SANDBOX_HELP,
        extra="sandbox",
        aimed_check="check_aimed",
    ),
}


def open_door(name: str, door: Door) -> Command:
    """The group behind ``door``, loaded now; missing dependencies are one sentence."""
    return typer.main.get_command(_load(name, door).app)


def check_aimed(name: str, value: str) -> None:
    """Before a command of a shell aimed (by ``value``) at what door ``name`` runs: that
    it runs; else one sentence (a :class:`UserError`)."""
    door = DOORS[name]
    if door.aimed_check:
        getattr(_load(name, door), door.aimed_check)(Path(value))


def _load(name: str, door: Door) -> Any:
    try:
        return importlib.import_module(door.module)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(door.module):
            raise
        raise UserError(
            f"`kubeshift {name}` needs {exc.name}, which comes with the {door.extra} "
            f"extra: pip install 'kubeshift[{door.extra}]'."
        ) from exc


class _Closed(TyperCommand):
    """The group as ``--help`` lists it; the real one is opened when it is called."""

    def __init__(self, name: str, door: Door) -> None:
        super().__init__(name, help=door.help, short_help=door.help)
        self.door = door

    def make_context(
        self, info_name: str | None, args: list[str], parent: Context | None = None, **extra: Any
    ) -> Context:
        try:
            opened = open_door(self.name or "", self.door)
        except KubeshiftError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None
        return opened.make_context(info_name, args, parent=parent, **extra)


class DoorGroup(OneSentenceGroup):
    """kubeshift's top-level group: its own commands, and those behind a door."""

    def list_commands(self, ctx: Context) -> list[str]:
        return [*super().list_commands(ctx), *(n for n in DOORS if n not in self.commands)]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        door = DOORS.get(cmd_name)
        if door is not None and cmd_name not in self.commands:
            return _Closed(cmd_name, door)
        return super().get_command(ctx, cmd_name)
