"""Manifest of the probe family: importer capability probes that backends load directly.
One row per committed asset: (asset name, source file in this folder, entry function, destination)."""
MANIFEST = (
    ("probe_add", "add.py", "add", "assets"),
    ("probe_trap", "trap.py", "checked_sqrt", "assets"),
    ("probe_atomic_add", "atomic.py", "histogram", "assets"),
    ("probe_atomic_add_f32", "atomic.py", "total_f32", "assets"),
    ("probe_row_sum", "row_sum.py", "row_sum", "assets"),
    ("probe_copy", "copy.py", "copy", "assets"),
    ("probe_loop_break", "loop_break.py", "first_above", "assets"),
    ("probe_int_semantics", "int_semantics.py", "int_semantics", "assets"),
)
