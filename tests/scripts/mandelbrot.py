"""Mandelbrot escape counts on a small grid (complex arithmetic written with real and imaginary
parts, since the arrays are real)."""
import numpy as np

h, w, steps = 48, 64, 30
cr = np.linspace(-2.2, 0.8, w)[None, :] + np.zeros((h, 1))
ci = np.linspace(-1.2, 1.2, h)[:, None] + np.zeros((1, w))
zr = np.zeros((h, w))
zi = np.zeros((h, w))
counts = np.zeros((h, w), dtype=np.int32)
for _ in range(steps):
    inside = zr * zr + zi * zi <= 4.0
    counts = counts + inside.astype(np.int32)
    zr, zi = np.where(inside, zr * zr - zi * zi + cr, zr), np.where(inside, 2.0 * zr * zi + ci, zi)
result = counts

if __name__ == "__main__":
    print(result.sum())
