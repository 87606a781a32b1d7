"""Layer 4: recommend a coherent, version-aware set of network-stack config changes."""

from __future__ import annotations

from flinktune.advise.engine import Effect, ProposedChange, Recommendation, recommend
from flinktune.situation.environment import Environment, load_profile, parse_parameters

__all__ = ["Effect", "Environment", "ProposedChange", "Recommendation", "load_profile", "parse_parameters",
           "recommend"]
