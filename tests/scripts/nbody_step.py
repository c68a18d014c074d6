"""One leapfrog step of a softened gravitational n-body system."""
import numpy as np

n, dt, soft = 64, 0.01, 0.05
i = np.arange(n)
pos = np.stack([np.cos(i * 0.9) * (1 + i % 5), np.sin(i * 0.9) * (1 + i % 3), np.sin(i * 0.3)], axis=1)
vel = np.stack([-np.sin(i * 0.9), np.cos(i * 0.9), np.zeros(n)], axis=1) * 0.1
mass = 1.0 + (i % 4) * 0.25

diff = pos[None, :, :] - pos[:, None, :]
dist2 = (diff ** 2).sum(axis=-1) + soft ** 2
inv_r3 = dist2 ** -1.5
acc = (diff * (inv_r3 * mass[None, :])[:, :, None]).sum(axis=1)
vel = vel + dt * acc
pos = pos + dt * vel
energy = 0.5 * (mass * (vel ** 2).sum(axis=1)).sum()
result = np.concatenate([pos.ravel(), vel.ravel(), energy[None]])

if __name__ == "__main__":
    print(result[-1])
