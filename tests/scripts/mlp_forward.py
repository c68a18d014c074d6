"""Forward pass of a two-layer perceptron with a GELU-free ReLU hidden layer and a softmax head."""
import numpy as np

batch, n_in, hidden, n_out = 32, 20, 64, 10
x = np.cos(np.arange(batch * n_in).reshape(batch, n_in) * 0.11).astype(np.float32)
w1 = (np.sin(np.arange(n_in * hidden).reshape(n_in, hidden) * 0.05) * 0.3).astype(np.float32)
b1 = np.linspace(-0.1, 0.1, hidden).astype(np.float32)
w2 = (np.cos(np.arange(hidden * n_out).reshape(hidden, n_out) * 0.07) * 0.2).astype(np.float32)
b2 = np.zeros(n_out, dtype=np.float32)

h = np.maximum(x @ w1 + b1, 0)
logits = h @ w2 + b2
logits = logits - logits.max(axis=-1, keepdims=True)
probs = np.exp(logits)
probs /= probs.sum(axis=-1, keepdims=True)
result = probs

if __name__ == "__main__":
    print(result.argmax(axis=-1))
