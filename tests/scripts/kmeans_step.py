"""One k-means (Lloyd) step: assign points to the nearest centroid, then move each centroid to the
mean of its points."""
import numpy as np

n, k, d = 300, 4, 2
t = np.arange(n) * 0.7
points = np.stack([np.cos(t) * (1 + (np.arange(n) % 4)), np.sin(t * 1.3) * (1 + (np.arange(n) % 3))], axis=1)
centroids = points[:k] + 0.1

dist = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
labels = dist.argmin(axis=1)
onehot = (labels[:, None] == np.arange(k)[None, :]).astype(np.float64)
counts = onehot.sum(axis=0)
new_centroids = (onehot.T @ points) / np.maximum(counts, 1)[:, None]
inertia = np.take_along_axis(dist, labels[:, None], axis=1).sum()
result = np.concatenate([new_centroids.ravel(), counts, inertia[None]])

if __name__ == "__main__":
    print(result)
