"""The one strict base model of every configuration schema (scenario kinds, shared component blocks,
sweep specs): unknown keys are errors and defaults are validated like given values."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Pydantic base of every hpcrail schema: ``extra="forbid"`` (a misspelt key is an error naming
    the allowed keys), ``validate_default=True`` (defaults pass the same validators) and
    ``validate_assignment=True`` (``sc.simulation.duration_s = -1`` raises, in a notebook as in a file)."""

    model_config = ConfigDict(extra="forbid", validate_default=True, validate_assignment=True)


__all__ = ["Strict"]
