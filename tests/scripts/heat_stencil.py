"""Explicit steps of the 2-D heat equation on a grid with fixed (Dirichlet) borders."""
import numpy as np

n, alpha = 40, 0.2
y, x = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
u = np.exp(-((x - 0.5) ** 2 + (y - 0.4) ** 2) * 30.0)
u[0, :] = 0.0
u[-1, :] = 1.0
for _ in range(5):
    lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
    new = u.copy()
    new[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * lap
    u = new
result = u

if __name__ == "__main__":
    print(result.mean())
