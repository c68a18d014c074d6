"""Standardize columns, then their covariance, per-column extremes and a masked mean."""
import numpy as np

data = np.cos(np.arange(120 * 6).reshape(120, 6) * 0.21) * np.arange(1, 7) + np.arange(6)
z = (data - data.mean(axis=0)) / data.std(axis=0, ddof=1)
cov = z.T @ z / (z.shape[0] - 1)
positive = z > 0
masked_mean = np.where(positive, z, 0).sum(axis=0) / positive.sum(axis=0)
result = np.concatenate([cov.ravel(), z.max(axis=0), z.min(axis=0), masked_mean, z[positive][:5]])

if __name__ == "__main__":
    print(result)
