"""A few gradient-descent steps of logistic regression with a clipped log-loss."""
import numpy as np

n, d = 200, 5
X = np.sin(np.arange(n * d).reshape(n, d) * 0.13) + np.cos(np.arange(n * d).reshape(n, d) * 0.029)
y = (X @ np.linspace(-1.0, 1.0, d) > 0.1).astype(np.float64)
w = np.zeros(d)
for _ in range(10):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    grad = X.T @ (p - y) / n
    w = w - 0.5 * grad
p = np.clip(1.0 / (1.0 + np.exp(-(X @ w))), 1e-7, 1 - 1e-7)
loss = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()
result = np.concatenate([w, loss[None]])

if __name__ == "__main__":
    print(result)
