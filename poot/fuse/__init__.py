"""poot.fuse: graph passes and the fusion planner. Importing it registers each fusible op's index
map (`access` rule) in the op registry (access.py)."""
from poot.fuse import access  # noqa: F401  (registers the access rules)
