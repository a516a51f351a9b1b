"""One sentence for a pydantic validation error, naming the key and the nearest valid name.

Shared by the stack's config models (``components.contract.models``) and the runtime settings
(``automation.config.settings``), so a typo anywhere reads the same way::

    kubeshift:runtime.clusters.primary.kubeconfg is not a known setting; did you mean
    'kubeconfig'?
"""

from __future__ import annotations

import difflib
import json
import types
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import ErrorDetails


def join(key: str, loc: Sequence[Any]) -> str:
    """``kubeshift:cluster`` + ``("worker_pools", 0, "name")`` → ``…worker_pools[0].name``."""
    path = key
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def show(value: Any) -> str:
    """A short rendering of a bad value; a Pulumi secret is never shown."""
    if isinstance(value, Mapping) and set(value) == {"secure"}:
        return "a secret value"
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def sentence(model: type[BaseModel], key: str, error: ErrorDetails) -> str:
    """The first error of a validation of ``model`` (found under ``key``) as one sentence."""
    loc = tuple(error["loc"])
    path = join(key, loc)
    kind = error["type"]
    if kind == "missing":
        return f"{path} is required."
    if kind == "extra_forbidden":
        names = accepted_names(model, loc[:-1])
        guess = difflib.get_close_matches(str(loc[-1]), names, n=1, cutoff=0.6)
        hint = f"did you mean {guess[0]!r}?" if guess else f"known: {', '.join(names)}."
        return f"{path} is not a known setting; {hint}"
    message = str(error["msg"])
    message = message[0].lower() + message[1:]
    message = message.removeprefix("value error, ")
    return f"{path} is invalid: {message} (got {show(error.get('input'))})."


def accepted_names(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """The keys the mapping at ``loc`` inside ``model`` accepts (field names first)."""
    current: Any = model
    for part in loc:
        current = _child(current, part)
        if current is None:
            return []
    target = _unwrap(current)
    if not (isinstance(target, type) and issubclass(target, BaseModel)):
        return []
    names = list(target.model_fields)
    names += [f.alias for f in target.model_fields.values() if f.alias and f.alias not in names]
    return names


def _unwrap(annotation: Any) -> Any:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _unwrap(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        models = [a for a in options if isinstance(a, type) and issubclass(a, BaseModel)]
        return _unwrap(models[0] if models else options[0])
    return annotation


def _child(annotation: Any, part: Any) -> Any:
    annotation = _unwrap(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = annotation.model_fields
        field = fields.get(str(part)) or next((f for f in fields.values() if f.alias == part), None)
        return field.annotation if field else None
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (dict, Mapping) and len(args) == 2:
        return args[1]
    if origin in (list, tuple, Sequence) and args:
        return args[0]
    return None
