"""scikit-learn runs on poot arrays through the array API (array_api_dispatch=True): two estimators
(LinearDiscriminantAnalysis, PCA) fit and predict on poot inputs and match the same estimators on
NumPy inputs. scikit-learn needs SCIPY_ARRAY_API=1 before SciPy is imported, so the check runs in a
child process with that environment."""
from __future__ import annotations

import json
import os
import subprocess
import sys

CHILD = r"""
import json
import numpy as np
import sklearn
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
import poot as pt

rng = np.random.default_rng(0)
X = rng.normal(size=(80, 6))
X[:, 1] += 2.0 * X[:, 0]
y2 = (X[:, 0] + 0.5 * rng.normal(size=80) > 0).astype(np.int64)
y3 = rng.integers(0, 3, 80)
cases = {
    "lda_svd_proba": lambda X, y2, y3: LinearDiscriminantAnalysis().fit(X, y2).predict_proba(X),
    "lda_svd_transform_3class": lambda X, y2, y3: LinearDiscriminantAnalysis().fit(X, y3).transform(X),
    "lda_eigen_predict": lambda X, y2, y3: LinearDiscriminantAnalysis(solver="eigen").fit(X, y3).predict(X),
    "pca_full": lambda X, y2, y3: PCA(n_components=3, svd_solver="full").fit(X).transform(X),
    "pca_covariance_eigh": lambda X, y2, y3: PCA(n_components=2, svd_solver="covariance_eigh")
        .fit(X).inverse_transform(PCA(n_components=2, svd_solver="covariance_eigh").fit(X).transform(X)),
}
out = {}
for name, run in cases.items():
    ref = run(X, y2, y3)
    with sklearn.config_context(array_api_dispatch=True):
        got = run(pt.asarray(X), pt.asarray(y2), pt.asarray(y3))
    out[name] = {"type": type(got).__module__ + "." + type(got).__name__,
                 "shape": list(np.shape(got)), "ref_shape": list(ref.shape),
                 "max_err": float(np.max(np.abs(np.asarray(got, dtype=np.float64) - ref)))}
print(json.dumps(out))
"""


def test_sklearn_estimators_on_poot_arrays_match_numpy():
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(results) == {"lda_svd_proba", "lda_svd_transform_3class", "lda_eigen_predict", "pca_full",
                            "pca_covariance_eigh"}
    for name, r in results.items():
        assert r["type"] == "poot.trace.array.Array", (name, r)  # the estimator computed in poot
        assert r["shape"] == r["ref_shape"], (name, r)
        assert r["max_err"] <= 1e-9, (name, r)
