"""Function transformations over traced poot programs: derivatives (grad, value_and_grad, vjp,
jvp, jacrev, jacfwd, hessian, linearize, custom rules, checkpoint, stop_gradient), the loop with
stacked outputs (scanning.py) and the vectorizing map (vmap, batching.py)."""
from poot.transforms.api import grad, hessian, jacfwd, jacrev, jvp, linearize, value_and_grad, vjp
from poot.transforms.batching import vmap
from poot.transforms.custom import checkpoint, custom_jvp, custom_vjp, remat, stop_gradient
from poot.transforms.scanning import scan

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize",
           "stop_gradient", "checkpoint", "remat", "custom_vjp", "custom_jvp", "vmap", "scan"]
