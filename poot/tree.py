"""`pt.tree`: JAX's `jax.tree` names (`pt.tree.map(f, params, grads)`), the functions of
`pt.tree_util` (poot/tree_util.py) under their short names."""
from __future__ import annotations

from poot.tree_util import (tree_all as all, tree_flatten as flatten,  # noqa: A004
                            tree_flatten_with_path as flatten_with_path, tree_leaves as leaves,
                            tree_leaves_with_path as leaves_with_path, tree_map as map,  # noqa: A004
                            tree_map_with_path as map_with_path, tree_reduce as reduce,
                            tree_structure as structure, tree_unflatten as unflatten)

__all__ = ["all", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map", "map_with_path",
           "reduce", "structure", "unflatten"]
